/**
 * Where this node's drain is kept (docs/decisions.md "Drain"), and why a node is drained:
 * - Kubernetes source: the Node annotation `herald.io/drain` (its value says why): `kubectl annotate node N
 *   herald.io/drain=maintenance` drains, `kubectl get node N -o yaml` shows it, and `herald drain` / `undrain` patch it
 *   (RBAC: patch on nodes). The daemon reads it back through the Node informer, so it survives restarts and reimages
 *   and is the same from anywhere in the cluster. A `drain.json` left in stateDir is ignored (with a warning).
 * - Standalone (manifests or no source): the file `drain.json` in stateDir (src/daemon/state.ts).
 * - A node leaving service (node-eligibility.ts departure signals, with gracefulShutdown enabled) drains as well,
 *   until the signal clears.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DRAIN_ANNOTATION } from '../controller/node-eligibility.ts';
import type { NodeState } from '../controller/node-eligibility.ts';
import { apiErrorCode, apiErrorText } from '../k8s/forbidden.ts';
import type { Reason } from '../controller/reasons.ts';
import { readDrained, writeDrained } from './state.ts';

/** Why the node is drained; `describeDrain` gives its text. */
export type DrainSource =
  | { readonly kind: 'annotation'; readonly node: string; readonly value: string }
  | { readonly kind: 'file'; readonly path: string; readonly sinceMs?: number }
  | { readonly kind: 'request'; readonly reason: string }
  | { readonly kind: 'departure'; readonly reasons: readonly Reason[] };

/** One line for logs, `herald status` and `/readyz`, e.g. `annotation herald.io/drain="maintenance" on Node n1`. */
export function describeDrain(s: DrainSource): string {
  switch (s.kind) {
    case 'annotation':
      return `annotation ${DRAIN_ANNOTATION}=${JSON.stringify(s.value)} on Node ${s.node}`;
    case 'file':
      return `file ${s.path}${s.sinceMs !== undefined ? ` (since ${new Date(s.sinceMs).toISOString()})` : ''}`;
    case 'request':
      return `herald drain ${JSON.stringify(s.reason)} (kept in memory only: no drain record)`;
    case 'departure':
      return `node leaving service: ${s.reasons.map((r) => r.message).join('; ')}`;
  }
}

/** Where `herald drain` / `undrain` record the operator's drain. */
export type DrainRecord =
  | {
      readonly kind: 'annotation';
      /** Sets (`reason`) or removes (undefined) the annotation. @throws Error with the apiserver's answer */
      write(reason: string | undefined): Promise<void>;
    }
  | {
      readonly kind: 'file';
      readonly path: string;
      /** The drain recorded now (never throws; `error` when the file exists but is unusable). */
      read(): { drained: boolean; sinceMs?: number; error?: string };
      /** Records (`reason` given) or removes the drain. @throws Error when stateDir cannot be written */
      write(reason: string | undefined): Promise<void>;
    };

/** The standalone record: `drain.json` in `stateDir`. */
export function fileDrainRecord(stateDir: string, nowMs: () => number = Date.now): DrainRecord {
  return {
    kind: 'file',
    path: join(stateDir, 'drain.json'),
    read: () => readDrained(stateDir),
    write: async (reason) => writeDrained(stateDir, reason !== undefined, nowMs()),
  };
}

/**
 * The Kubernetes record: `patch(value)` sets this Node's `herald.io/drain` annotation (a string) or removes it (null),
 * e.g. src/k8s/node-annotations.ts `patchNodeAnnotation`.
 */
export function annotationDrainRecord(patch: (value: string | null) => Promise<void>): DrainRecord {
  return { kind: 'annotation', write: (reason) => patch(reason ?? null) };
}

/** Options of {@link DrainControl}. */
export interface DrainControlOptions {
  /** Starts (`drain`) and ends (`undrain`) the speaker's RFC 8326 drain. */
  speaker: { drain(opts: { waitTimeSec: number }): Promise<void>; undrain(): void; on(event: 'drained', fn: () => void): unknown };
  log: Logger;
  /** Where the operator's drain is kept; without one, `drain()` holds it in memory until the process ends. */
  record: DrainRecord | undefined;
  nodeName: string;
  /** The RFC 8326 wait of a drain starting now, seconds (0 without an Established session). */
  waitSec: () => number;
  /** Departure signals of this node drain (some peer has gracefulShutdown enabled). */
  departureDrains: () => boolean;
  /** Called when the sources or the phase changed (metrics). */
  onChange?: () => void;
}

/** The phase of the speaker's drain: none, 65535:0 attached (the wait), or every route withdrawn. */
export type DrainPhase = 'none' | 'gracefulShutdown' | 'withdrawn';

/**
 * This node's drain: which sources hold it (the operator's record, a departure), and the speaker's drain that
 * follows them: started when the first source appears (RFC 8326: 65535:0, the wait, the withdrawal), ended when the
 * last one goes. Every start and end is logged with its source; a drain found at start is a warning.
 */
export class DrainControl {
  readonly #o: DrainControlOptions;
  /** The operator's drain from the file or `drain()` (standalone, or no record). */
  #local: DrainSource | undefined;
  #node: NodeState | undefined;
  /** The Node was seen once (a Node gone after that is a departure). */
  #nodeSeen = false;
  #active: string[] = [];
  #phase: DrainPhase = 'none';
  #started = false;

  constructor(opts: DrainControlOptions) {
    this.#o = opts;
    opts.speaker.on('drained', () => {
      if (this.#phase === 'gracefulShutdown') this.#phase = 'withdrawn';
      opts.onChange?.();
    });
  }

  /**
   * At start: the standalone record is read (a drain found there is kept, with a warning); with the Kubernetes
   * record a `drain.json` left in `stateDir` is reported and ignored.
   */
  start(stateDir: string): void {
    const r = this.#o.record;
    if (r?.kind === 'file') {
      const d = r.read();
      if (d.error !== undefined) this.#o.log.warn({ err: d.error }, 'cannot read the drain record; starting undrained');
      if (d.drained) this.#local = { kind: 'file', path: r.path, ...(d.sinceMs !== undefined ? { sinceMs: d.sinceMs } : {}) };
    } else if (r?.kind === 'annotation') {
      const stale = readDrained(stateDir);
      if (stale.drained) {
        this.#o.log.warn(
          { file: join(stateDir, 'drain.json') },
          `ignoring ${join(stateDir, 'drain.json')}: with the Kubernetes source a drain is the Node annotation ${DRAIN_ANNOTATION} (kubectl annotate node ${this.#o.nodeName} ${DRAIN_ANNOTATION}=REASON)`,
        );
      }
    }
    this.#apply();
  }

  /** After each pass: this node's state from the controller (undefined while the source has not synced). */
  observe(node: NodeState | undefined): void {
    this.#node = node;
    if (node !== undefined && !node.reasons.some((r) => r.code === 'NodeNotFound')) this.#nodeSeen = true;
    this.#apply();
  }

  /**
   * Why the drain cannot be known yet, or undefined once it can: with the Node annotation as the record, nothing is
   * known until the Node has been read (the source has synced). Nothing is announced meanwhile, not even the static
   * routes of the config: the node may be starting drained (docs/decisions.md "Drain").
   */
  get unknown(): string | undefined {
    if (this.#o.record?.kind !== 'annotation' || this.#node !== undefined) return undefined;
    return `static routes held until Node ${this.#o.nodeName} is read: its ${DRAIN_ANNOTATION} annotation may drain this node`;
  }

  /** The operator's drain, as a source text, when the node is drained (undefined otherwise). */
  get drained(): string | undefined {
    const s = this.#operator();
    return s !== undefined ? describeDrain(s) : undefined;
  }

  /** Why the node is leaving service (its departure signals, or its Node gone), undefined when it stays. */
  get departing(): string | undefined {
    const n = this.#node;
    if (n === undefined) return undefined;
    if (n.departing.length > 0) return n.departing.map((r) => r.message).join('; ');
    if (this.#nodeSeen && n.reasons.some((r) => r.code === 'NodeNotFound')) return `Node ${n.name} is gone (deleted)`;
    return undefined;
  }

  /** The sources holding the drain now, as texts (empty when not drained). */
  get sources(): readonly string[] {
    return this.#active;
  }

  get phase(): DrainPhase {
    return this.#phase;
  }

  /**
   * The operator drains this node (`herald drain`, `POST /api/v1/drain`). Kubernetes: the annotation is set, and the
   * drain follows when the Node informer brings it back. Returns what was done, for the caller.
   * @throws Error naming the fix when the record cannot be written (RBAC, stateDir)
   */
  async drain(reason = 'herald drain'): Promise<string> {
    const r = this.#o.record;
    if (r?.kind === 'annotation') {
      await this.#write(r, reason, `cannot set the annotation ${DRAIN_ANNOTATION} on Node ${this.#o.nodeName}`);
      return `drain requested: annotation ${DRAIN_ANNOTATION}=${JSON.stringify(reason)} set on Node ${this.#o.nodeName}`;
    }
    if (r?.kind === 'file') await this.#write(r, reason, `cannot record the drain in ${r.path}`);
    this.#local = r?.kind === 'file' ? { kind: 'file', path: r.path, sinceMs: Date.now() } : { kind: 'request', reason };
    this.#apply();
    return r?.kind === 'file' ? `drain started; recorded in ${r.path}` : 'drain started';
  }

  /** Ends the operator's drain (a departure keeps draining until its signals clear). */
  async undrain(): Promise<string> {
    const r = this.#o.record;
    if (r?.kind === 'annotation') {
      await this.#write(r, undefined, `cannot remove the annotation ${DRAIN_ANNOTATION} from Node ${this.#o.nodeName}`);
    } else {
      if (r?.kind === 'file') await this.#write(r, undefined, `cannot remove ${r.path}`);
      this.#local = undefined;
      this.#apply();
    }
    const departing = this.#o.departureDrains() ? this.departing : undefined;
    return departing !== undefined ? `undrained; the node stays drained while it is leaving service: ${departing}` : 'undrained';
  }

  async #write(r: DrainRecord, reason: string | undefined, what: string): Promise<void> {
    try {
      await r.write(reason);
    } catch (err) {
      const text = apiErrorText(err);
      const fix = apiErrorCode(err) === 403 ? ': grant patch on nodes (deploy/kubernetes/rbac.yaml)' : '';
      throw new Error(`${what}: ${text}${fix}`, { cause: err });
    }
  }

  #operator(): DrainSource | undefined {
    if (this.#o.record?.kind === 'annotation') {
      const v = this.#node?.drain;
      return v !== undefined ? { kind: 'annotation', node: this.#o.nodeName, value: v } : undefined;
    }
    return this.#local;
  }

  /** Starts or ends the speaker's drain to follow the sources; logs each change with its source. */
  #apply(): void {
    // With the annotation, nothing is known before the Node has been read.
    if (this.#o.record?.kind === 'annotation' && this.#node === undefined) return;
    const sources: DrainSource[] = [];
    const op = this.#operator();
    if (op !== undefined) sources.push(op);
    const n = this.#node;
    if (n !== undefined && n.departing.length > 0 && this.#o.departureDrains()) sources.push({ kind: 'departure', reasons: n.departing });
    const texts = sources.map(describeDrain);
    const first = !this.#started;
    this.#started = true;
    if (texts.join('\n') === this.#active.join('\n')) return;
    const was = this.#active.length > 0;
    this.#active = texts;
    if (texts.length > 0 && !was) {
      // Starting drained: this node's routes left the routers before it stopped; none is announced now (no wait).
      const waitTimeSec = first ? 0 : this.#o.waitSec();
      if (first) this.#o.log.warn({ sources: texts }, `starting drained: ${texts.join('; ')} (nothing is announced until it ends)`);
      else this.#o.log.info({ sources: texts, waitTimeSec }, `drain: ${texts.join('; ')}: graceful shutdown (RFC 8326), then every route withdrawn`);
      this.#phase = 'gracefulShutdown';
      this.#o.speaker.drain({ waitTimeSec }).catch((err: unknown) => this.#o.log.error({ err }, 'drain failed'));
    } else if (texts.length === 0 && was) {
      this.#o.log.info('undrained: announcing again');
      this.#phase = 'none';
      this.#o.speaker.undrain();
    } else {
      this.#o.log.info({ sources: texts }, `still drained: ${texts.join('; ')}`);
    }
    this.#o.onChange?.();
  }
}
