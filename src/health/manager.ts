/**
 * HealthManager: runs the desired set of health checks, applies rise/fall and flap control, and
 * answers "may this key be announced from this node?" (`gate`).
 *
 * Level-triggered: `setChecks(specs)` takes the full desired set each time; checks with the same key
 * and the same target keep their state (timing changes are applied in place), changed targets restart
 * as `unknown`, missing ones are stopped (their in-flight probe is aborted).
 *
 * Gate rule (docs/health-checks.md, docs/decisions.md "Health checks"):
 * - every check of the key (and every node-scope check) must be `up`;
 * - a check still `unknown` blocks a key that is **not** announced (reason `Pending`) but keeps a key
 *   that is announced (a route already out stays until the check has failed `fall` times); an invalid
 *   check (reason `InvalidCheck`) is treated the same way;
 * - a key that is not announced is also blocked while its flap damper says so (`HoldDown`, `Suppressed`).
 * The caller reports what it actually announces with `setAnnounced(key, bool)`; an announced → withdrawn
 * transition is what the flap damper counts.
 *
 * Events: `'change' (keys: string[], info: { nodeLevel: boolean })`, batched per microtask, whenever
 * `gate(key)` may have changed (state change, check added/removed, hold-down/suppression ended).
 * `nodeLevel: true` means a node-scope check changed: re-evaluate every key, also those without checks.
 *
 * Scheduling: each check first runs at a random offset within its interval, then every
 * `interval × (1 ± jitter)` measured from the moment the previous probe got its semaphore permit
 * (never sooner than 10 % of the interval after the previous end); a semaphore bounds concurrent
 * probes (`maxConcurrent`). Time spent waiting for a permit is not made up: under overload the
 * effective interval stretches instead of the queue staying full.
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../../bgp/main-thread.ts';
import { realClock } from '../../bgp/main-thread.ts';
import type { DamperStatus, FlapControlParams } from './flap-damper.ts';
import { DEFAULT_FLAP_CONTROL, FlapDamper, validateFlapControl } from './flap-damper.ts';
import { probeCheck } from './probe.ts';
import { RiseFall } from './rise-fall.ts';
import type { RiseFallSnapshot } from './rise-fall.ts';
import { Semaphore } from './semaphore.ts';
import type { CheckSpec, GateResult, HealthEvents, HealthLike, HealthState, InvalidCheckCode, ProbeResult, HealthReason } from './types.ts';
import { CheckKind, HealthCode } from './types.ts';
import { ipFamilyOf } from '../net/address.ts';

/** Probe function: must not reject (a rejection is recorded as a `NetworkError` failure). */
export type ProbeFn = (spec: CheckSpec, signal: AbortSignal) => Promise<ProbeResult>;

/** A spec that could not be used: its gate (or every gate, `node`) fails closed with `code`. */
interface InvalidEntry {
  gate: string;
  message: string;
  node: boolean;
  code: InvalidCheckCode;
}

export interface HealthManagerOptions {
  clock?: Clock;
  /** Probe implementation (default: real network probes, {@link probeCheck}). */
  probe?: ProbeFn;
  /** Most probes in flight at once (default 64). */
  maxConcurrent?: number;
  /** Flap control; missing fields take {@link DEFAULT_FLAP_CONTROL}. */
  flapControl?: Partial<FlapControlParams>;
  /** Schedule jitter as a fraction of the interval, 0..0.5 (default 0.1). */
  jitter?: number;
  /** Random source in [0, 1) for jitter (default Math.random). */
  random?: () => number;
}

export interface GateOptions {
  /** Key under which the route is reported to `setAnnounced` (default: the gate key itself). */
  announcedAs?: string;
  /**
   * Whether other nodes can serve the key meanwhile (default true). False: hold-down and suppression do not block
   * it, since they exist to prefer stable nodes, not to prolong an outage; the result says so (`FlapControlWaived`).
   */
  othersCanServe?: boolean;
}

/** Outcome of one `setChecks` call (check keys). */
export interface SetChecksResult {
  added: string[];
  restarted: string[];
  kept: string[];
  removed: string[];
  /** Specs refused, with the reason; their gate reports `InvalidCheck` (blocks new announcements, keeps announced ones). */
  errors: Array<{ key: string; gate: string; message: string }>;
}

/** One check in `status()`. Times are epoch ms. */
export interface CheckStatus {
  key: string;
  gate: string;
  scope: 'gate' | 'node';
  kind: CheckSpec['kind'];
  /** `host:port[/path]` of each probed host, comma separated. */
  target: string;
  intervalSec: number;
  timeoutSec: number;
  rise: number;
  fall: number;
  state: HealthState;
  since: number;
  consecutiveOk: number;
  consecutiveFail: number;
  failures: number;
  probes: number;
  /** Latency of the last probe, ms (null before the first). */
  latencyMs: number | null;
  lastProbeAt: number | null;
  lastResult: ProbeResult | null;
  lastFailure: ProbeResult | null;
}

/** Cheap counters for metrics (no per-check copies). Totals count since the manager was created. */
export interface HealthStats {
  checks: number;
  up: number;
  down: number;
  unknown: number;
  invalid: number;
  probesTotal: number;
  probeFailuresTotal: number;
  inFlight: number;
  waiting: number;
  suppressed: number;
  holdDown: number;
}

export interface HealthStatus {
  nowMs: number;
  checks: CheckStatus[];
  invalid: Array<{ key: string; gate: string; scope: 'gate' | 'node'; message: string; code: InvalidCheckCode }>;
  dampers: Array<{ key: string } & DamperStatus>;
  announced: number;
  probes: { inFlight: number; waiting: number; maxConcurrent: number };
}

interface Entry {
  spec: CheckSpec;
  identity: string;
  rf: RiseFall;
  timer: TimerHandle | null;
  abort: AbortController | null;
  stopped: boolean;
}

/**
 * Validate a check spec.
 * @returns an error message, or null when the spec is usable
 */
export function checkSpecError(spec: CheckSpec): string | null {
  if (spec === null || typeof spec !== 'object') return 'a check spec must be an object';
  if (typeof spec.error === 'string' && spec.error !== '') return spec.error;
  if (typeof spec.key !== 'string' || spec.key === '') return 'key must be a non-empty string';
  if (typeof spec.gate !== 'string' || (spec.gate === '' && spec.scope !== 'node')) return 'gate must be a non-empty string';
  if (!(Object.values(CheckKind) as string[]).includes(spec.kind)) return `unknown kind ${JSON.stringify(spec.kind)}`;
  if (!Array.isArray(spec.hosts) || spec.hosts.length === 0) return 'hosts must list at least one IP address';
  for (const h of spec.hosts) if (ipFamilyOf(h) === undefined) return `host ${JSON.stringify(h)} is not an IP address`;
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) return `port must be 1-65535, got ${spec.port}`;
  if (!(Number.isFinite(spec.intervalSec) && spec.intervalSec > 0)) return `interval must be > 0 seconds, got ${spec.intervalSec}`;
  if (!(Number.isFinite(spec.timeoutSec) && spec.timeoutSec > 0)) return `timeout must be > 0 seconds, got ${spec.timeoutSec}`;
  if (!Number.isInteger(spec.rise) || spec.rise < 1) return `rise must be an integer >= 1, got ${spec.rise}`;
  if (!Number.isInteger(spec.fall) || spec.fall < 1) return `fall must be an integer >= 1, got ${spec.fall}`;
  if (spec.path !== undefined && (typeof spec.path !== 'string' || !spec.path.startsWith('/'))) return `path must start with "/", got ${JSON.stringify(spec.path)}`;
  if (spec.expectedStatus !== undefined) {
    if (!Array.isArray(spec.expectedStatus) || spec.expectedStatus.length === 0) return 'expectedStatus must list at least one status';
    for (const s of spec.expectedStatus) if (!Number.isInteger(s) || s < 100 || s > 599) return `expected status ${s} is not 100-599`;
  }
  return null;
}

function identityOf(s: CheckSpec): string {
  return JSON.stringify([s.kind, [...s.hosts].sort(), s.port, s.path ?? null, s.expectedStatus ? [...s.expectedStatus].sort((a, b) => a - b) : null]);
}

function targetOf(s: CheckSpec): string {
  const path = s.kind === 'tcp' ? '' : (s.path ?? (s.kind === 'kube-proxy-node' ? '/healthz' : s.kind === 'kube-proxy-service' ? '/health' : '/'));
  return s.hosts.map((h) => `${h.includes(':') ? `[${h}]` : h}:${s.port}${path}`).join(',');
}

function isNode(s: CheckSpec): boolean {
  return s.scope === 'node';
}

export class HealthManager extends EventEmitter<HealthEvents> implements HealthLike {
  private readonly clock: Clock;
  private readonly probe: ProbeFn;
  private readonly sem: Semaphore;
  private readonly flap: FlapControlParams;
  private readonly jitter: number;
  private readonly random: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly byGate = new Map<string, Set<string>>();
  private readonly nodeChecks = new Set<string>();
  private invalid = new Map<string, InvalidEntry>();
  private readonly announced = new Set<string>();
  private readonly dampers = new Map<string, FlapDamper>();
  private readonly damperTimers = new Map<string, TimerHandle>();
  private readonly inFlight = new Set<Promise<void>>();
  private pendingKeys = new Set<string>();
  private pendingNode = false;
  private flushQueued = false;
  private closed = false;
  private probesTotal = 0;
  private probeFailuresTotal = 0;

  /** @throws RangeError on invalid options (flap control, maxConcurrent, jitter) */
  constructor(opts: HealthManagerOptions = {}) {
    super();
    this.clock = opts.clock ?? realClock;
    this.probe = opts.probe ?? probeCheck;
    this.sem = new Semaphore(opts.maxConcurrent ?? 64);
    this.flap = { ...DEFAULT_FLAP_CONTROL, ...opts.flapControl };
    validateFlapControl(this.flap);
    this.jitter = opts.jitter ?? 0.1;
    if (!(this.jitter >= 0 && this.jitter <= 0.5)) throw new RangeError(`jitter must be within 0..0.5, got ${this.jitter}`);
    this.random = opts.random ?? Math.random;
  }

  /**
   * Replace the desired set of checks (level-triggered). Never throws for bad specs: they are
   * returned in `errors` and their gate reports `InvalidCheck`: a key not announced stays unannounced,
   * an announced key is kept (as with an `unknown` check).
   * @throws Error after `close()`
   */
  setChecks(specs: readonly CheckSpec[]): SetChecksResult {
    if (this.closed) throw new Error('HealthManager is closed');
    const res: SetChecksResult = { added: [], restarted: [], kept: [], removed: [], errors: [] };
    const desired = new Map<string, CheckSpec>();
    const invalid = new Map<string, InvalidEntry>();
    for (const raw of specs) {
      const err = checkSpecError(raw);
      const key = typeof raw?.key === 'string' ? raw.key : String(raw?.key);
      const gate = typeof raw?.gate === 'string' ? raw.gate : '';
      if (err === null && desired.has(key)) {
        res.errors.push({ key, gate, message: `duplicate check key ${JSON.stringify(key)}` });
        continue;
      }
      if (err !== null) {
        res.errors.push({ key, gate, message: err });
        invalid.set(key, { gate, message: err, node: raw?.scope === 'node', code: raw?.error !== undefined ? (raw.errorCode ?? HealthCode.InvalidCheck) : HealthCode.InvalidCheck });
        continue;
      }
      desired.set(key, { ...raw, hosts: [...raw.hosts], ...(raw.expectedStatus ? { expectedStatus: [...raw.expectedStatus] } : {}) });
    }
    // Invalid entries: notify gates whose invalid set changed.
    for (const [k, v] of this.invalid) if (!invalid.has(k)) this.touch(v.gate, v.node);
    for (const [k, v] of invalid) if (this.invalid.get(k)?.message !== v.message) this.touch(v.gate, v.node);
    this.invalid = invalid;

    for (const [key, entry] of [...this.entries]) {
      if (!desired.has(key)) {
        this.removeEntry(entry);
        res.removed.push(key);
      }
    }
    for (const [key, spec] of desired) {
      const cur = this.entries.get(key);
      const identity = identityOf(spec);
      if (cur && cur.identity === identity) {
        const old = cur.spec;
        if (old.gate !== spec.gate || isNode(old) !== isNode(spec)) {
          this.unindex(cur);
          this.touchSpec(old);
          cur.spec = spec;
          this.index(cur);
          this.touchSpec(spec);
        } else {
          cur.spec = spec;
        }
        cur.rf.setThresholds(spec.rise, spec.fall);
        res.kept.push(key);
        continue;
      }
      if (cur) {
        this.removeEntry(cur);
        res.restarted.push(key);
      } else {
        res.added.push(key);
      }
      const entry: Entry = { spec, identity, rf: new RiseFall(spec.rise, spec.fall, this.clock.now()), timer: null, abort: null, stopped: false };
      this.entries.set(key, entry);
      this.index(entry);
      this.touchSpec(spec);
      this.schedule(entry, this.random() * spec.intervalSec * 1000);
    }
    return res;
  }

  /**
   * Tell the manager whether `key` is announced from this node right now. An announced → not
   * announced transition counts as a withdrawal for hold-down and damping. Idempotent.
   */
  setAnnounced(key: string, announced: boolean): void {
    const was = this.announced.has(key);
    if (announced === was) return;
    if (announced) {
      this.announced.add(key);
      return;
    }
    this.announced.delete(key);
    const now = this.clock.now();
    let d = this.dampers.get(key);
    if (!d) {
      d = new FlapDamper(this.flap);
      this.dampers.set(key, d);
    }
    d.recordWithdraw(now);
    this.armDamperTimer(key);
    this.touch(key, false);
  }

  /** Keys currently reported as announced. */
  announcedKeys(): string[] {
    return [...this.announced];
  }

  private armDamperTimer(key: string): void {
    const old = this.damperTimers.get(key);
    if (old !== undefined) this.clock.clearTimer(old);
    this.damperTimers.delete(key);
    const d = this.dampers.get(key);
    if (!d || this.closed) return;
    const now = this.clock.now();
    const until = d.blockedUntil(now);
    let at: number;
    if (until !== null) {
      at = until;
    } else {
      const p = d.penaltyAt(now);
      if (p < 1) {
        this.dampers.delete(key);
        return;
      }
      at = now + Math.ceil(this.flap.halfLifeSec * Math.log2(p) * 1000) + 1;
    }
    this.damperTimers.set(
      key,
      this.clock.setTimer(() => {
        this.damperTimers.delete(key);
        if (until !== null) this.touch(key, false);
        this.armDamperTimer(key);
      }, at - now),
    );
  }

  /**
   * May `key` be announced from this node? See the module comment for the rule. Reasons list every
   * problem; `pass` may be true with reasons when an announced key is kept while a check is unknown.
   * With `opts.announcedAs`, the checks are those of `key` but the announced state and the flap damper
   * are those of `announcedAs` (several Services sharing one VIP: gate each Service's checks against
   * the VIP's route, then announce if any Service passes).
   */
  gate(key: string, opts: GateOptions = {}): GateResult {
    const now = this.clock.now();
    const announcedKey = opts.announcedAs ?? key;
    const announced = this.announced.has(announcedKey);
    const node = this.nodeVerdict(announced);
    const reasons: HealthReason[] = [...node.reasons];
    let pass = node.pass;
    for (const [ck, inv] of this.invalid) {
      // An invalid check is treated like one that never passes: nothing new is announced (an invalid
      // node-scope check blocks every key), but a route already announced is kept: a typo in an
      // annotation must not withdraw a working VIP.
      if (!inv.node && inv.gate !== key) continue;
      if (!announced) pass = false;
      const what = inv.code === HealthCode.NodeAddressUnknown ? `check ${ck} cannot be built` : `check ${ck} is invalid`;
      reasons.push({ code: inv.code, message: `${what}: ${inv.message}${announced ? ' (kept announced meanwhile)' : ''}`, check: ck });
    }
    const keys = this.byGate.get(key);
    if (keys) {
      for (const ck of keys) {
        const e = this.entries.get(ck) as Entry;
        const s = e.rf.snapshot();
        if (s.state === 'down') {
          pass = false;
          const f = s.lastFailure;
          reasons.push({
            code: f?.code ?? HealthCode.NetworkError,
            message: `check ${ck} is down (${s.consecutiveFail} consecutive failures): ${f?.message ?? ''}`,
            since: s.sinceMs,
            check: ck,
          });
        } else if (s.state === 'unknown') {
          if (!announced) pass = false;
          reasons.push({ code: HealthCode.Pending, message: `check ${ck} has passed ${s.consecutiveOk} of ${e.rf.rise} times${announced ? ' (kept announced meanwhile)' : ''}`, since: s.sinceMs, check: ck });
        }
      }
    }
    if (!announced) {
      const d = this.dampers.get(announcedKey);
      if (d) {
        const st = d.status(now);
        const damping: HealthReason[] = [];
        if (st.suppressed) {
          damping.push({
            code: HealthCode.Suppressed,
            message: `flapping: suppressed after ${st.withdrawals} withdrawals, penalty ${Math.round(st.penalty)} (reuse at ${this.flap.reuseThreshold}), ${fmtSec((st.suppressedUntilMs as number) - now)} left`,
            ...(st.suppressedSinceMs !== null ? { since: st.suppressedSinceMs } : {}),
            until: st.suppressedUntilMs as number,
          });
        }
        if (st.holdDownUntilMs !== null && !(st.suppressed && (st.suppressedUntilMs as number) >= st.holdDownUntilMs)) {
          damping.push({
            code: HealthCode.HoldDown,
            message: `withdrawn recently: hold-down ${this.flap.holdDownSec} s, ${fmtSec(st.holdDownUntilMs - now)} left`,
            ...(st.lastWithdrawAtMs !== null ? { since: st.lastWithdrawAtMs } : {}),
            until: st.holdDownUntilMs,
          });
        }
        if (damping.length > 0 && opts.othersCanServe === false) {
          // Flap control prefers stable nodes; with no other node to prefer it would only keep the Service dark.
          if (pass) reasons.push({ code: HealthCode.FlapControlWaived, message: `announced although ${damping.map((r) => r.message).join('; ')}: no other node can serve it` });
        } else if (damping.length > 0) {
          pass = false;
          const others = opts.othersCanServe === true ? ' (other nodes serve it meanwhile)' : '';
          for (const r of damping) reasons.push({ ...r, message: `${r.message}${others}` });
        }
      }
    }
    return { pass, reasons };
  }

  /** The node-level verdict alone (node-scope checks), as `gate` would apply it to a non-announced key. */
  nodeGate(): GateResult {
    return this.nodeVerdict(false);
  }

  /**
   * The node-scope checks' part of a verdict: a check down blocks every key; one not yet passed (unknown) blocks a
   * key not announced yet and keeps an announced one.
   */
  private nodeVerdict(announced: boolean): GateResult {
    const reasons: HealthReason[] = [];
    let pass = true;
    for (const ck of this.nodeChecks) {
      const e = this.entries.get(ck);
      if (!e) continue;
      const s = e.rf.snapshot();
      if (s.state === 'down') {
        pass = false;
        const f = s.lastFailure;
        reasons.push({ code: HealthCode.NodeUnhealthy, message: `node check ${ck} is down: ${f?.code ?? '?'}: ${f?.message ?? ''}`, since: s.sinceMs, check: ck });
      } else if (s.state === 'unknown') {
        if (!announced) pass = false;
        reasons.push({ code: HealthCode.Pending, message: `node check ${ck} has not passed ${e.rf.rise} times yet${announced ? ' (kept announced meanwhile)' : ''}`, since: s.sinceMs, check: ck });
      }
    }
    return { pass, reasons };
  }

  /** Everything for the admin API and metrics. */
  status(): HealthStatus {
    const now = this.clock.now();
    const checks: CheckStatus[] = [];
    for (const e of this.entries.values()) {
      const s: RiseFallSnapshot = e.rf.snapshot();
      const sp = e.spec;
      checks.push({
        key: sp.key,
        gate: sp.gate,
        scope: isNode(sp) ? 'node' : 'gate',
        kind: sp.kind,
        target: targetOf(sp),
        intervalSec: sp.intervalSec,
        timeoutSec: sp.timeoutSec,
        rise: sp.rise,
        fall: sp.fall,
        state: s.state,
        since: s.sinceMs,
        consecutiveOk: s.consecutiveOk,
        consecutiveFail: s.consecutiveFail,
        failures: s.failures,
        probes: s.probes,
        latencyMs: s.lastResult ? s.lastResult.latencyMs : null,
        lastProbeAt: s.lastProbeAtMs,
        lastResult: s.lastResult,
        lastFailure: s.lastFailure,
      });
    }
    const dampers: HealthStatus['dampers'] = [];
    for (const [key, d] of this.dampers) dampers.push({ key, ...d.status(now) });
    return {
      nowMs: now,
      checks,
      invalid: [...this.invalid].map(([key, v]) => ({ key, gate: v.gate, scope: v.node ? ('node' as const) : ('gate' as const), message: v.message, code: v.code })),
      dampers,
      announced: this.announced.size,
      probes: { inFlight: this.sem.inFlight, waiting: this.sem.waiting, maxConcurrent: this.sem.size },
    };
  }

  /** Counters for metrics, O(checks) without allocation per check. */
  stats(): HealthStats {
    const now = this.clock.now();
    let up = 0;
    let down = 0;
    let unknown = 0;
    for (const e of this.entries.values()) {
      const st = e.rf.state;
      if (st === 'up') up++;
      else if (st === 'down') down++;
      else unknown++;
    }
    let suppressed = 0;
    let holdDown = 0;
    for (const d of this.dampers.values()) {
      const s = d.status(now);
      if (s.suppressed) suppressed++;
      else if (s.holdDownUntilMs !== null) holdDown++;
    }
    return {
      checks: this.entries.size,
      up,
      down,
      unknown,
      invalid: this.invalid.size,
      probesTotal: this.probesTotal,
      probeFailuresTotal: this.probeFailuresTotal,
      inFlight: this.sem.inFlight,
      waiting: this.sem.waiting,
      suppressed,
      holdDown,
    };
  }

  /** Stop every timer and abort probes in flight; resolves when the probes have settled. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const e of this.entries.values()) this.stopEntry(e);
    this.entries.clear();
    this.byGate.clear();
    this.nodeChecks.clear();
    for (const t of this.damperTimers.values()) this.clock.clearTimer(t);
    this.damperTimers.clear();
    await Promise.all([...this.inFlight]);
  }

  private index(e: Entry): void {
    if (isNode(e.spec)) {
      this.nodeChecks.add(e.spec.key);
      return;
    }
    let set = this.byGate.get(e.spec.gate);
    if (!set) {
      set = new Set();
      this.byGate.set(e.spec.gate, set);
    }
    set.add(e.spec.key);
  }

  private unindex(e: Entry): void {
    if (isNode(e.spec)) {
      this.nodeChecks.delete(e.spec.key);
      return;
    }
    const set = this.byGate.get(e.spec.gate);
    set?.delete(e.spec.key);
    if (set && set.size === 0) this.byGate.delete(e.spec.gate);
  }

  private stopEntry(e: Entry): void {
    e.stopped = true;
    if (e.timer !== null) this.clock.clearTimer(e.timer);
    e.timer = null;
    e.abort?.abort();
  }

  private removeEntry(e: Entry): void {
    this.stopEntry(e);
    this.unindex(e);
    this.entries.delete(e.spec.key);
    this.touchSpec(e.spec);
  }

  private schedule(e: Entry, delayMs: number): void {
    if (e.stopped || this.closed) return;
    e.timer = this.clock.setTimer(() => {
      e.timer = null;
      const p = this.run(e);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }, delayMs);
  }

  private async run(e: Entry): Promise<void> {
    const release = await this.sem.acquire();
    if (e.stopped) {
      release();
      return;
    }
    // Measured from when the probe got its permit: time spent queueing is not made up, so that
    // under overload every check slows down instead of the queue staying full.
    const startedAt = this.clock.now();
    const ac = new AbortController();
    e.abort = ac;
    let result: ProbeResult;
    try {
      result = await this.probe(e.spec, ac.signal);
    } catch (err) {
      result = { ok: false, code: HealthCode.NetworkError, message: `probe error: ${String(err)}`, latencyMs: 0 };
    } finally {
      release();
      e.abort = null;
    }
    if (e.stopped) return;
    this.probesTotal++;
    if (!result.ok) this.probeFailuresTotal++;
    const now = this.clock.now();
    if (e.rf.record(result, now)) this.touchSpec(e.spec);
    const intervalMs = e.spec.intervalSec * 1000;
    const nextIn = intervalMs * (1 + this.jitter * (2 * this.random() - 1)) - (now - startedAt);
    this.schedule(e, Math.max(nextIn, intervalMs * 0.1));
  }

  private touchSpec(s: CheckSpec): void {
    this.touch(s.gate, isNode(s));
  }

  private touch(key: string, nodeLevel: boolean): void {
    if (nodeLevel) {
      this.pendingNode = true;
    } else {
      this.pendingKeys.add(key);
    }
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushQueued = false;
    const nodeLevel = this.pendingNode;
    let keys = this.pendingKeys;
    this.pendingKeys = new Set();
    this.pendingNode = false;
    if (nodeLevel) {
      keys = new Set(keys);
      for (const k of this.byGate.keys()) keys.add(k);
      for (const k of this.announced) keys.add(k);
      for (const v of this.invalid.values()) if (!v.node) keys.add(v.gate);
    }
    if (this.closed || (keys.size === 0 && !nodeLevel)) return;
    this.emit('change', [...keys], { nodeLevel });
  }
}

function fmtSec(ms: number): string {
  return `${Math.max(0, ms / 1000).toFixed(1)} s`;
}
