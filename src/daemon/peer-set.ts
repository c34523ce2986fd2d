/**
 * The peer set: which configured BGP neighbours this node runs (a peer's `nodeSelector`/`nodeSelectors` against this
 * node's labels), with their passwords resolved (file, environment or Secret) and their local AS and BGP Identifier; applying a new list as a diff (diff.ts: unchanged peers keep their sessions,
 * changed ones are updated, removed ones get Cease / Peer De-configured, new ones start); and each peer's history
 * from the speaker's `peerState` events (since when in this state, flaps, last error) for the admin API, metrics
 * and logs, with its BFD state changes (`bfdState`) and UPDATE send times (`updateSent`) for metrics and logs. Metrics
 * are kept for the peers that run only: a removed peer's series are removed with it, and its last events (the
 * Cease of its removal) are logged, not counted.
 *
 * Nothing reaches the speaker before `open()`: the daemon opens the set once its first route set is in the speaker
 * (daemon.ts `start`), so no session comes up before there is a table to send (docs/sessions.md "Start-up order");
 * lists applied before are kept, the last one is what opens.
 */
import type { Logger } from 'pino';
import type { Clock, PeerConfig as SpeakerPeerConfig } from '../../bgp/main-thread.ts';
import { describeNotification, describeReason, resetsSession } from '../../bgp/main-thread.ts';
import type { Config } from '../config/schema.ts';
import { matchesSelectors } from '../k8s/selector.ts';
import type { PeerView } from '../admin/view.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import { diffPeers } from './diff.ts';
import { errorView, peerView } from '../admin/peer-view.ts';
import type { PeerHistory } from '../admin/peer-view.ts';
import { MappingError, resolvePassword } from './mapping.ts';
import { toSpeakerPeer } from '../config/peer-fields.ts';
import type { SessionIdentity } from '../config/peer-fields.ts';
import { md5KeyProblem } from '../config/secrets.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import { ipFamilyOf } from '../net/address.ts';
import type { SecretLookup } from '../k8s/secrets.ts';
import type { BfdStateEvent, PeerStateEvent, SpeakerLike, UnsentRoutesEvent, UpdateSentEvent } from './speaker-like.ts';

/** True when some peer depends on this node's labels (its set follows the Node object). */
export function followsNodeLabels(cfg: Config): boolean {
  return cfg.peers.some((p) => p.nodeSelector !== undefined || p.nodeSelectors !== undefined);
}

/** Options of {@link resolvePeers}. */
export interface ResolveOptions {
  /** This node's AS number and BGP Identifier where they differ from the Speaker's (a BGPNodeConfigOverride). */
  readonly node?: Omit<SessionIdentity, 'localAddress'>;
  /** This node's source addresses, at most one per family, for peers that set no `localAddress`. */
  readonly sourceAddresses?: readonly string[];
  /** Passwords of `passwordSecret` (without: such a peer is left out). */
  readonly secrets?: SecretLookup;
  /** A peer left out and why (its Secret cannot be read yet): it runs once it can, the others meanwhile. */
  readonly skipped?: (peer: string, problem: string) => void;
  /** The secret files of the configuration, read ahead (src/config/secrets.ts `readSecretFiles`). */
  readonly files?: SecretFileTexts;
}

/**
 * Speaker configs of the peers that apply to a node with `labels` (nodeSelector, nodeSelectors), passwords
 * resolved; each session's AS number is the peer's `localAs`, else the node's (`opts.node`), else the Speaker's;
 * its source address the peer's `localAddress`, else the node's of the peer's family (`opts.sourceAddresses`).
 * A peer whose `passwordSecret` cannot be read is left out (`opts.skipped`), never the others.
 * @throws MappingError listing every peer whose password file or variable cannot be read
 */
export function resolvePeers(cfg: Config, labels: Record<string, string>, env: NodeJS.ProcessEnv, opts: ResolveOptions = {}): SpeakerPeerConfig[] {
  const issues: MappingError['issues'] = [];
  const out: SpeakerPeerConfig[] = [];
  const secretNames = new Set<string>();
  cfg.peers.forEach((p, i) => {
    if (!matchesSelectors(p.nodeSelector, p.nodeSelectors, labels)) return;
    const localAs = p.localAs ?? opts.node?.localAs;
    const source = opts.sourceAddresses?.find((a) => ipFamilyOf(a) === ipFamilyOf(p.address));
    const session: SessionIdentity = {
      ...(localAs !== undefined && localAs !== cfg.bgp.localAs ? { localAs } : {}),
      ...(opts.node?.bgpIdentifier !== undefined ? { bgpIdentifier: opts.node.bgpIdentifier } : {}),
      ...(source !== undefined && p.localAddress === undefined ? { localAddress: source } : {}),
    };
    if (p.passwordSecret !== undefined) {
      secretNames.add(p.passwordSecret.name);
      const v = opts.secrets?.get(p.passwordSecret.name, p.passwordSecret.key) ?? { problem: 'Secrets are read only with source.kubernetes' };
      const long = 'value' in v ? md5KeyProblem(v.value) : undefined;
      if ('problem' in v || long !== undefined) opts.skipped?.(p.name, 'problem' in v ? v.problem : `Secret ${p.passwordSecret.name} key ${p.passwordSecret.key}: ${long}`);
      else out.push(toSpeakerPeer(p, v.value, session));
      return;
    }
    try {
      out.push(toSpeakerPeer(p, resolvePassword(p, i, env, opts.files), session));
    } catch (err) {
      if (err instanceof MappingError) issues.push(...err.issues);
      else throw err;
    }
  });
  opts.secrets?.retain(secretNames);
  if (issues.length > 0) throw new MappingError(issues);
  return out;
}

/** Options of {@link PeerSet}. */
export interface PeerSetOptions {
  speaker: Pick<SpeakerLike, 'localAs' | 'addPeer' | 'updatePeer' | 'removePeer' | 'peers'>;
  log: Logger;
  metrics: HeraldMetrics;
  clock: Clock;
}

/** See the module comment. */
export class PeerSet {
  readonly #speaker: PeerSetOptions['speaker'];
  readonly #log: Logger;
  readonly #metrics: HeraldMetrics;
  readonly #clock: Clock;
  /** Speaker peer configs applied, by name. */
  readonly #applied = new Map<string, SpeakerPeerConfig>();
  readonly #history = new Map<string, PeerHistory>();
  /** The last list applied before `open()` (undefined once open). */
  #before: SpeakerPeerConfig[] | undefined = [];

  constructor(opts: PeerSetOptions) {
    this.#speaker = opts.speaker;
    this.#log = opts.log;
    this.#metrics = opts.metrics;
    this.#clock = opts.clock;
  }

  /**
   * Follow the speaker's events about the peers: session and BFD states (then `onChange`: this node's status shows
   * them), UPDATE send times, routes it could not send.
   */
  follow(speaker: Pick<SpeakerLike, 'on'>, onChange: () => void): void {
    speaker.on('peerState', (e: PeerStateEvent) => {
      this.observe(e);
      onChange();
    });
    speaker.on('updateSent', (e: UpdateSentEvent) => this.observeUpdateSent(e));
    speaker.on('bfdState', (e: BfdStateEvent) => {
      this.observeBfd(e);
      onChange();
    });
    speaker.on('unsentRoutes', (e: UnsentRoutesEvent) => this.observeUnsent(e));
  }

  /** True when a peer of that name runs. */
  has(name: string): boolean {
    return this.#applied.has(name);
  }

  /** Start the peers of the last list applied, and from now on apply every list at once. Idempotent. */
  open(): void {
    const list = this.#before;
    if (list === undefined) return;
    this.#before = undefined;
    this.apply(list);
  }

  /** Apply a desired peer list as a diff against what runs (before `open()`: kept for it). */
  apply(next: SpeakerPeerConfig[]): void {
    if (this.#before !== undefined) {
      this.#before = next;
      return;
    }
    const d = diffPeers([...this.#applied.values()], next, resetsSession);
    for (const p of d.removed) {
      this.#log.info({ peer: p.name }, 'peer removed: Cease / Peer De-configured');
      this.#applied.delete(p.name);
      this.#history.delete(p.name);
      this.#metrics.removePeer(p.name);
      this.#speaker.removePeer(p.name).catch((err: unknown) => this.#log.warn({ err, peer: p.name }, 'removing peer failed'));
    }
    for (const c of d.changed) {
      this.#log.info({ peer: c.name, fields: c.fields, sessionReset: c.sessionReset }, 'peer changed');
      this.#applied.set(c.name, c.after);
      this.#speaker.updatePeer(c.after);
    }
    for (const p of d.added) {
      this.#log.info({ peer: p.name, address: p.address, port: p.port, peerAs: p.peerAs }, 'peer added');
      this.#applied.set(p.name, p);
      this.#history.set(p.name, { flaps: 0, since: this.#now() });
      this.#speaker.addPeer(p);
    }
  }

  /** Record one session state change: history (kept only for peers that still run), metrics, a log line. */
  observe(e: PeerStateEvent): void {
    const at = this.#now();
    const h = this.#history.get(e.peer) ?? { flaps: 0 };
    h.since = at;
    if (e.from === 'Established' && e.to !== 'Established') h.flaps += 1;
    const err = errorView(e.reason, at);
    if (err && e.to !== 'Established') h.lastError = err;
    if (this.#applied.has(e.peer)) {
      // A removed peer's last transitions are logged, not kept.
      this.#history.set(e.peer, h);
      this.#metrics.observeStateChange(e.peer, e.from, e.to);
      if (e.reason?.kind === 'notificationSent' || e.reason?.kind === 'notificationReceived') {
        this.#metrics.observeNotification(e.peer, e.reason.kind === 'notificationSent' ? 'sent' : 'received', e.reason.code, e.reason.subcode);
      }
    }
    const fields = { peer: e.peer, from: e.from, to: e.to, reason: e.reason ? describeReason(e.reason, describeNotification) : 'unknown', ...(e.reason ? { reasonKind: e.reason.kind } : {}) };
    if (e.to === 'Established') this.#log.info(fields, 'session established');
    else if (e.from === 'Established') this.#log.warn(fields, 'session down');
    else this.#log.info(fields, 'session state change');
  }

  /** Routes toward a peer cannot be encoded (once per session and reason): an error line naming the fix's target. */
  observeUnsent(e: UnsentRoutesEvent): void {
    this.#log.error({ peer: e.peer, reason: e.reason, example: e.example }, 'routes cannot be sent to this peer (the others are; see the peer\'s lastError): fix the next hop or attributes they need');
  }

  /** Record one BFD state change of a peer's session (RFC 5880): metrics and a log line (a failure resets BGP). */
  observeBfd(e: BfdStateEvent): void {
    if (this.#applied.has(e.peer)) this.#metrics.observeBfdStateChange(e.peer, e.from, e.to);
    const fields = { peer: e.peer, from: e.from, to: e.to, diagnostic: e.diagnostic, remoteState: e.remoteState, detectionTimeMs: e.detectionTimeMs };
    if (e.failure) this.#log.warn(fields, 'BFD down: forwarding path to the peer failed; resetting the BGP session (Cease / BFD Down)');
    else if (e.to === 'Up') this.#log.info(fields, 'BFD up');
    else this.#log.info(fields, 'BFD state change');
  }

  /** Record the time one UPDATE took to pack and hand to the socket (metrics; peers that run only). */
  observeUpdateSent(e: UpdateSentEvent): void {
    if (typeof e.packMs === 'number' && this.#applied.has(e.peer)) this.#metrics.observeUpdateSent(e.peer, e.packMs / 1000);
  }

  /** Every peer that runs, as the admin API shows it (a speaker behind a cache may still list a removed one). */
  views(): PeerView[] {
    return this.#speaker.peers().flatMap((p) => (this.#applied.has(p.name) ? [peerView(p, this.#history.get(p.name))] : []));
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}
