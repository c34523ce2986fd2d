/**
 * Quarantine: the Kubernetes objects the controller cannot use, treated as absent and reported with their name and
 * the reason (docs/operations.md "Quarantined objects"). An object is quarantined when
 * - it does not have the shape Herald reads (src/k8s/screen.ts), e.g. an EndpointSlice with `endpoints: [null]`;
 *   an EndpointSlice is then left out of its Service's endpoints (they count as not ready: fail closed), a Service
 *   has no VIP, this node's Node object is as if missing (nothing is announced), a ServiceCIDR is left out;
 * - computing its decision throws (a bug meeting an odd object): the Service then has no VIP, so no earlier decision
 *   stays in force, and the others are computed as usual.
 * An object leaves quarantine when a usable version replaces it or it is deleted.
 *
 * Entries are kept per owner, the unit the controller recomputes: a Service's own entry and those of its
 * EndpointSlices under `service:ns/name`, this node's Node under `node`, ServiceCIDRs under `servicecidrs`.
 */
import type { Clock } from '../../bgp/main-thread.ts';
import { screenObject } from '../k8s/screen.ts';
import type { KubeObject, ResourceKind } from '../k8s/types.ts';

/** One quarantined object. */
export interface QuarantinedObject {
  readonly kind: ResourceKind;
  /** "namespace/name" (a Node or ServiceCIDR: its name). */
  readonly name: string;
  /** What is wrong and what Herald does instead, e.g. "endpoints[0]: expected object, got null". */
  readonly reason: string;
  /** Since when (Clock ms). */
  readonly since: number;
}

/** An entry as an owner reports it (the time is added here). */
export type QuarantineEntry = Omit<QuarantinedObject, 'since'>;

/** See the module comment. */
export class Quarantine {
  readonly #clock: Clock;
  readonly #onChange: (entered: readonly QuarantinedObject[], released: readonly QuarantinedObject[]) => void;
  /** Screening results by object identity (objects in the store are replaced, never changed in place). */
  readonly #screened = new WeakMap<object, string | null>();
  readonly #byOwner = new Map<string, QuarantinedObject[]>();

  constructor(opts: { clock: Clock; onChange?: (entered: readonly QuarantinedObject[], released: readonly QuarantinedObject[]) => void }) {
    this.#clock = opts.clock;
    this.#onChange = opts.onChange ?? (() => undefined);
  }

  /** Why `obj` cannot be used as a `kind` (src/k8s/screen.ts), or undefined; cached per object. */
  problem(kind: ResourceKind, obj: KubeObject): string | undefined {
    let p = this.#screened.get(obj);
    if (p === undefined) this.#screened.set(obj, (p = screenObject(kind, obj) ?? null));
    return p ?? undefined;
  }

  /** Replaces the entries of `owner`; an entry unchanged (same kind, name, reason) keeps its `since`. */
  set(owner: string, entries: readonly QuarantineEntry[]): void {
    const before = this.#byOwner.get(owner) ?? [];
    if (before.length === 0 && entries.length === 0) return;
    const id = (e: QuarantineEntry): string => `${e.kind} ${e.name} ${e.reason}`;
    const old = new Map(before.map((e) => [id(e), e]));
    const now = this.#clock.now();
    const next = entries.map((e) => old.get(id(e)) ?? { ...e, since: now });
    const kept = new Set(next);
    const entered = next.filter((e) => !before.includes(e));
    const released = before.filter((e) => !kept.has(e));
    if (next.length === 0) this.#byOwner.delete(owner);
    else this.#byOwner.set(owner, next);
    if (entered.length > 0 || released.length > 0) this.#onChange(entered, released);
  }

  /** Every quarantined object, sorted by kind and name. */
  list(): QuarantinedObject[] {
    return [...this.#byOwner.values()].flat().sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1));
  }
}
