/**
 * The health gate stage (docs/architecture.md): between the controller's candidates and route assembly. It owns
 * - the gate keys (gate-key.ts) and the check specs derived from the candidates and the config (check-specs.ts),
 *   registered with the health checker before any verdict is read, so a VIP that needs a check is never announced
 *   before that check has passed `rise` times (docs/decisions.md "Health checks");
 * - the verdicts, applied to each Service's candidates (desired-routes.ts `gateService`): the final decisions and
 *   the route pieces that go on to route assembly, and the static routes that pass their checks;
 * - the announced state reported back to the health checker (`commit`), whose announced → withdrawn transitions
 *   drive hold-down and damping (rise/fall, hold-down and damping themselves live in src/health/).
 *
 * Verdict changes (the checker's `change` events) re-gate the Services concerned from their cached candidates: the
 * controller is never asked to recompute for a health change. Data flows one way: candidates in, decisions and
 * route pieces out.
 */
import type { Logger } from 'pino';
import type { CandidateSet } from '../controller/controller.ts';
import type { HealthVerdict, ServiceCandidates, ServiceDecision } from '../controller/desired-routes.ts';
import { gateService } from '../controller/desired-routes.ts';
import type { RouteContribution } from '../controller/route-merge.ts';
import type { StaticRouteConfig } from '../config/schema.ts';
import type { CheckSpec, HealthLike } from '../health/types.ts';
import type { CheckContext } from './check-specs.ts';
import { configCheckSpecs, serviceCheckSpecs } from './check-specs.ts';
import { gateKeyText, parseGateKey, routeGate, serviceGate } from './gate-key.ts';
import type { Quarantine } from '../controller/quarantine.ts';

/** The configuration-derived inputs of the gate. */
export interface GateInputs {
  readonly checks: CheckContext;
  /** Static routes from the config (checked ones are gated by their `healthCheck`). */
  readonly routes: readonly StaticRouteConfig[];
}

/** What one run changed, for route assembly, the observers and {@link HealthGate.commit}. */
export interface GateOutput {
  /** Services whose announced route pieces may have changed: "ns/name" → pieces (empty when nothing passes or the Service is gone). */
  readonly services: ReadonlyMap<string, readonly RouteContribution[]>;
  /** Static routes that pass their gate (unchecked ones always), in config order. */
  readonly staticRoutes: readonly StaticRouteConfig[];
  /** Services whose final decision changed, appeared or disappeared (sorted). */
  readonly decisionsChanged: readonly string[];
  /** Gate keys (text) whose announced state may have changed. */
  readonly touched: ReadonlySet<string>;
}

/** The final decisions, as the admin API and the Kubernetes Events observer read them. */
export interface DecisionSet {
  /** Every Service's decision, sorted by "ns/name" (read-only; no copy per call beyond the array). */
  services(): readonly ServiceDecision[];
  service(key: string): ServiceDecision | undefined;
}

/** Which decisions a pass changed: `all` after a full pass (every Service may have changed). */
export interface DecisionChanges {
  readonly all: boolean;
  /** "ns/name" of the Services whose decision changed, appeared or disappeared, sorted. */
  readonly services: readonly string[];
}

/** Options of {@link HealthGate}. */
export interface HealthGateOptions {
  health: HealthLike;
  log: Logger;
  inputs: GateInputs;
  /** Called when verdicts changed: the caller schedules a run. */
  onVerdictsChanged: () => void;
  /** Where a Service whose gate throws is recorded (it is then gated as absent: nothing announced). */
  quarantine?: Quarantine;
}

interface ServiceState {
  specs: CheckSpec[];
  /** JSON of `specs`, made when first compared. */
  json: string | undefined;
  /** The gated decision and route pieces (`GatedService`'s, kept here: no object of their own per Service). */
  decision: ServiceDecision;
  contributions: readonly RouteContribution[];
  /** Gate keys (text) of the announced VIPs. */
  announced: string[];
}

/** A run's output while it is built. */
interface MutableOutput extends GateOutput {
  readonly services: Map<string, readonly RouteContribution[]>;
  staticRoutes: readonly StaticRouteConfig[];
  readonly decisionsChanged: string[];
  readonly touched: Set<string>;
}

const PASS: HealthVerdict = { pass: true };
const NONE: readonly RouteContribution[] = Object.freeze([]);
/** Shared by the Services without checks or announced VIPs (most of them): one array, not one per Service. */
const NO_SPECS: CheckSpec[] = [];
const NO_GATES: string[] = [];

/** See the module comment. */
export class HealthGate implements DecisionSet {
  readonly #health: HealthLike;
  readonly #log: Logger;
  #inputs: GateInputs;
  #inputsChanged = true;
  /** Whether some static route of `#inputs` has a health check (undefined: not looked at since `configure`). */
  #staticChecked: boolean | undefined;
  #configSpecs: CheckSpec[] = [];
  readonly #services = new Map<string, ServiceState>();
  #sortedKeys: string[] | undefined;
  /** Gates with a check registered (scope gate), for the initial-sync wait. */
  #registered = new Set<string>();
  /** Gates reported announced to the health checker. */
  readonly #reported = new Set<string>();
  /** Checked static route gates that passed at the last run. */
  #staticAnnounced = new Set<string>();
  /** Services whose verdicts may have changed since the last run; `#allVerdicts`: every Service (a node check changed). */
  readonly #verdictsChanged = new Set<string>();
  #allVerdicts = false;
  readonly #quarantine: Quarantine | undefined;
  /** Test hook: work done (Services gated, Services whose specs were computed, setChecks calls). */
  readonly stats = { servicesApplied: 0, specsComputed: 0, setChecks: 0 };

  constructor(opts: HealthGateOptions) {
    this.#health = opts.health;
    this.#log = opts.log;
    this.#inputs = opts.inputs;
    this.#quarantine = opts.quarantine;
    opts.health.on('change', (keys, info) => {
      if (info.nodeLevel) this.#allVerdicts = true;
      else {
        for (const text of keys) {
          const key = parseGateKey(text);
          if (key?.kind === 'service') this.#verdictsChanged.add(key.service);
        }
      }
      opts.onVerdictsChanged();
    });
  }

  /** New configuration-derived inputs (reload); the next run recomputes the config's checks. */
  configure(inputs: GateInputs): void {
    this.#inputs = inputs;
    this.#inputsChanged = true;
    this.#staticChecked = undefined;
  }

  /**
   * Gate the candidates of the Services in `changed` (every Service with 'all') and of those whose verdicts changed.
   * Check specs are recomputed for the changed Services and registered (one `setChecks` when any changed) before
   * any verdict is read. Static routes are gated on every run (they are few).
   * @throws Error only from the health checker (after close)
   */
  run(candidates: CandidateSet | undefined, changed: Iterable<string> | 'all'): GateOutput {
    const out: MutableOutput = { services: new Map(), staticRoutes: [], decisionsChanged: [], touched: new Set() };
    const recompute = new Set<string>();
    if (changed === 'all') {
      for (const c of candidates?.services() ?? []) recompute.add(c.service);
      for (const k of this.#services.keys()) recompute.add(k);
      for (const k of this.#reported) out.touched.add(k);
    } else {
      for (const k of changed) recompute.add(k);
    }
    const newSpecs = this.#registerChecks(candidates, recompute);
    const regate = new Set(recompute);
    if (this.#allVerdicts) for (const k of this.#services.keys()) regate.add(k);
    else for (const k of this.#verdictsChanged) regate.add(k);
    this.#allVerdicts = false;
    this.#verdictsChanged.clear();
    for (const key of regate) this.#gateOrWithdraw(key, candidates?.service(key), newSpecs.get(key) ?? NO_SPECS, out);
    this.#gateStaticRoutes(out);
    out.decisionsChanged.sort();
    return out;
  }

  /** Gates one Service; a throw withdraws it (gated as absent) instead of leaving its earlier decision in force. */
  #gateOrWithdraw(key: string, candidates: ServiceCandidates | undefined, specs: CheckSpec[], out: MutableOutput): void {
    try {
      this.#gate(key, candidates, specs, out);
      this.#quarantine?.set(`gate:${key}`, []);
    } catch (err) {
      const reason = `its health gate cannot be computed: ${err instanceof Error ? err.message : String(err)} (nothing of it is announced until it changes)`;
      this.#quarantine?.set(`gate:${key}`, [{ kind: 'Service', name: key, reason }]);
      this.#gate(key, undefined, NO_SPECS, out);
    }
  }

  /** Report to the health checker the announced state of the gates a run touched (announced ones first). */
  commit(out: GateOutput): void {
    const off: string[] = [];
    for (const g of out.touched) {
      const wanted = this.#announced(g);
      if (wanted && !this.#reported.has(g)) {
        this.#reported.add(g);
        this.#health.setAnnounced(g, true);
      } else if (!wanted && this.#reported.has(g)) off.push(g);
    }
    for (const g of off) {
      this.#reported.delete(g);
      this.#health.setAnnounced(g, false);
    }
  }

  services(): readonly ServiceDecision[] {
    this.#sortedKeys ??= [...this.#services.keys()].sort();
    return this.#sortedKeys.map((k) => (this.#services.get(k) as ServiceState).decision);
  }

  service(key: string): ServiceDecision | undefined {
    return this.#services.get(key)?.decision;
  }

  /** Every check spec: the config's, then each Service's. */
  specs(): CheckSpec[] {
    const out = [...this.#configSpecs];
    for (const st of this.#services.values()) for (const x of st.specs) out.push(x);
    return out;
  }

  /**
   * Checks that have not given their first verdict yet: registered gates still `Pending`, and node-scope checks
   * (kube-proxy's `/healthz`) still unknown, which hold back every VIP of the node while they are.
   */
  pendingChecks(): number {
    let n = 0;
    for (const g of this.#registered) if (this.#health.gate(g).reasons.some((r) => r.code === 'Pending')) n++;
    if (this.#configSpecs.some((x) => x.scope === 'node')) {
      for (const c of this.#health.status().checks) if (c.scope === 'node' && c.state === 'unknown') n++;
    }
    return n;
  }

  /**
   * Recompute the check specs of the Services in `recompute` (and the config's after a reload) and register the
   * whole set when any changed, before any verdict is read.
   * @returns the specs of the Services that have no state yet (they get it when gated)
   */
  #registerChecks(candidates: CandidateSet | undefined, recompute: ReadonlySet<string>): Map<string, CheckSpec[]> {
    let changed = false;
    if (this.#inputsChanged) {
      this.#configSpecs = configCheckSpecs(this.#inputs.checks, this.#inputs.routes);
      this.#inputsChanged = false;
      changed = true;
    }
    const newSpecs = new Map<string, CheckSpec[]>();
    for (const key of recompute) {
      const c = candidates?.service(key);
      if (c) this.stats.specsComputed++;
      const computed = c ? serviceCheckSpecs(this.#inputs.checks, c) : NO_SPECS;
      const specs = computed.length > 0 ? computed : NO_SPECS;
      const st = this.#services.get(key);
      const before = st ? (st.json ??= JSON.stringify(st.specs)) : '[]';
      const json = specs.length > 0 ? JSON.stringify(specs) : '[]';
      if (json !== before) changed = true;
      if (st) {
        st.specs = specs;
        st.json = json;
      } else newSpecs.set(key, specs);
    }
    if (changed) this.#register(newSpecs);
    return newSpecs;
  }

  /** Gate one Service's candidates (undefined: the Service is gone) and record what changed in `out`. */
  #gate(key: string, c: ServiceCandidates | undefined, newSpecs: CheckSpec[], out: MutableOutput): void {
    const st = this.#services.get(key);
    if (!c) {
      if (!st) return;
      this.#services.delete(key);
      this.#sortedKeys = undefined;
      for (const g of st.announced) out.touched.add(g);
      out.services.set(key, NONE);
      out.decisionsChanged.push(key);
      return;
    }
    this.stats.servicesApplied++;
    const gated = gateService(c, (vip) => this.#verdict(key, vip.decision.address, vip.othersCanServe));
    let announced = NO_GATES;
    for (const v of gated.decision.vips) {
      if (!v.announced) continue;
      const g = gateKeyText(serviceGate(key, v.address));
      if (announced === NO_GATES) announced = [g];
      else if (!announced.includes(g)) announced.push(g);
    }
    for (const g of st?.announced ?? []) out.touched.add(g);
    for (const g of announced) out.touched.add(g);
    if (st === undefined) {
      this.#services.set(key, { specs: newSpecs, json: undefined, decision: gated.decision, contributions: gated.contributions, announced });
      this.#sortedKeys = undefined;
      out.services.set(key, gated.contributions);
      out.decisionsChanged.push(key);
      return;
    }
    if (st.contributions !== gated.contributions) out.services.set(key, gated.contributions);
    if (st.decision !== gated.decision) out.decisionsChanged.push(key);
    st.decision = gated.decision;
    st.contributions = gated.contributions;
    st.announced = announced;
  }

  /**
   * Gate every static route: unchecked ones always pass. Without any check, the config's own list is the output (a
   * static table of 100,000 routes costs one lookup per run, and route assembly sees the same objects in the same
   * places).
   */
  #gateStaticRoutes(out: MutableOutput): void {
    const routes = this.#inputs.routes;
    this.#staticChecked ??= routes.some((r) => r.healthCheck !== undefined);
    if (!this.#staticChecked) {
      out.staticRoutes = routes;
      for (const g of this.#staticAnnounced) out.touched.add(g);
      this.#staticAnnounced = new Set();
      return;
    }
    const passing: StaticRouteConfig[] = [];
    const announced = new Set<string>();
    for (const r of routes) {
      if (r.healthCheck) {
        const g = gateKeyText(routeGate(r.prefix));
        if (!this.#health.gate(g).pass) continue;
        announced.add(g);
      }
      passing.push(r);
    }
    out.staticRoutes = passing;
    for (const g of this.#staticAnnounced) out.touched.add(g);
    for (const g of announced) out.touched.add(g);
    this.#staticAnnounced = announced;
  }

  /** Hand the whole set of specs to the checker: the config's, every Service's, those of Services new in this run. */
  #register(newSpecs: ReadonlyMap<string, CheckSpec[]>): void {
    this.stats.setChecks++;
    const all = [...this.#configSpecs];
    for (const st of this.#services.values()) all.push(...st.specs);
    for (const specs of newSpecs.values()) all.push(...specs);
    const res = this.#health.setChecks(all);
    for (const e of res.errors) this.#log.warn({ check: e.key, gate: e.gate }, `invalid health check: ${e.message}`);
    const registered = new Set<string>();
    for (const x of all) if (x.scope !== 'node') registered.add(x.gate);
    this.#registered = registered;
  }

  /**
   * The checker's verdict on one VIP, its reasons kept as data (code, absolute since/until) for the services view.
   * `othersCanServe` false: flap control does not hold it back (desired-routes.ts VipCandidate).
   */
  #verdict(service: string, address: string, othersCanServe: boolean): HealthVerdict {
    const g = this.#health.gate(gateKeyText(serviceGate(service, address)), { othersCanServe });
    if (g.pass) {
      const waived = g.reasons.filter((r) => r.code === 'FlapControlWaived');
      return waived.length === 0 ? PASS : { pass: true, waived: waived.map((r) => ({ code: r.code, message: r.message })) };
    }
    const causes = g.reasons.map((r) => ({
      code: r.code,
      message: r.message,
      ...(typeof r.since === 'number' ? { since: new Date(r.since).toISOString() } : {}),
      ...(typeof r.until === 'number' ? { until: new Date(r.until).toISOString() } : {}),
    }));
    return { pass: false, reason: g.reasons.map((r) => r.message).join('; ') || 'health check failing', causes };
  }

  /** Whether gate `text` is announced by the current state (a static route gate or a Service VIP gate). */
  #announced(text: string): boolean {
    if (this.#staticAnnounced.has(text)) return true;
    const key = parseGateKey(text);
    return key?.kind === 'service' && (this.#services.get(key.service)?.announced.includes(text) ?? false);
  }
}
