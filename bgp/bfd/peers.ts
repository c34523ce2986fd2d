/**
 * BFD for the Speaker's peers (RFC 5882 §4.3, §10.2): one BFD session per peer with `bfd` configured, on the
 * BFD client (by default the worker-thread handle, bgp/bfd/handle.ts, started on the first such peer), and the
 * per-peer BFD status the Speaker reports.
 *
 * A peer's BFD session going from Up to Down is a forwarding-path failure, reported through `onFailure`, on which
 * the Speaker resets the BGP session (Cease / BFD Down, RFC 9384). Two Downs are not failures: the peer holding
 * its BFD session AdminDown (RFC 5882 §3.2: the peer's Down packets carry State AdminDown; it is going away on
 * purpose, e.g. a graceful restart), and our own AdminDown.
 */
import type { Clock } from '../clock.ts';
import { BFD_OPTIONS } from '../peer-config.ts';
import type { PeerBfdConfig } from '../peer-config.ts';
import type { BfdChange, BfdPeerConfig, BfdSessionInfo } from './engine.ts';
import type { BfdClient } from './handle.ts';
import { describeDiag } from './packet.ts';
import type { BfdState } from './packet.ts';

/** The part of a Speaker peer this module reads. */
export interface BfdPeer {
  readonly name: string;
  readonly address: string;
  readonly localAddress?: string;
  readonly ebgpMultihop?: number;
  readonly bfd?: PeerBfdConfig;
}

/** A peer's BFD session as the admin API and metrics see it. Times are Clock milliseconds. */
export interface PeerBfdStatus {
  readonly state: BfdState;
  readonly remoteState: BfdState;
  /** Why our state last changed: RFC 5880 §4.1 Diag name, e.g. "Control Detection Time Expired". */
  readonly diagnostic: string;
  readonly multihop: boolean;
  readonly localDiscriminator: number;
  readonly remoteDiscriminator: number;
  /** Negotiated interval of our packets (0 while we send none periodically). */
  readonly transmitIntervalMs: number;
  /** How long without a packet before we declare the path down (0 while not Init/Up). */
  readonly detectionTimeMs: number;
  /** How the peer's TTL is checked: kernel, none (multihop without minimumTtl), unavailable (see ttlCheckReason). */
  readonly ttlCheck: string;
  readonly ttlCheckReason?: string;
  /** Why the session cannot run (sockets, a second session to the same address), when it cannot. */
  readonly error?: string;
  /**
   * Packets meant for this session that were discarded, by reason (RFC 5880 §6.8.6: `authentication`,
   * `remoteDiscriminator`, `wrongSource`, `ttlUnchecked`, ...; bgp/bfd/engine.ts), and the last one's reason and message.
   */
  readonly discards: Readonly<Record<string, number>>;
  readonly lastDiscard?: { readonly reason: string; readonly message: string };
  /** State changes since the peer was configured. */
  readonly stateChanges: number;
  /** When the session last reached Up (while Up). */
  readonly upSince?: number;
  /** The last time it left Up: when, why, and the Detection Time then in force (ms). */
  readonly lastDown?: { readonly at: number; readonly diagnostic: string; readonly remoteState: BfdState; readonly detectionTimeMs: number };
}

/** One state change, as the Speaker emits it ('bfdState'). */
export interface BfdStateEvent {
  readonly peer: string;
  readonly from: BfdState;
  readonly to: BfdState;
  /** RFC 5880 Diag code and name. */
  readonly diag: number;
  readonly diagnostic: string;
  readonly remoteState: BfdState;
  /** The Detection Time in force (while Down: the one in force before, ms). */
  readonly detectionTimeMs: number;
  /** Up → Down with the peer not AdminDown: the forwarding path failed. */
  readonly failure: boolean;
}

interface Tracked {
  config: BfdPeerConfig;
  /** The last nonzero Detection Time (the one in force when the session went Down). */
  detectionTimeMs: number;
  stateChanges: number;
  upSince: number | undefined;
  lastDown: PeerBfdStatus['lastDown'];
  /** The engine refused the session (e.g. a second one to the same address and hop mode). */
  error: string | undefined;
}

/** Construction options. */
export interface PeerBfdOptions {
  readonly clock: Clock;
  /** Starts the BFD client on first use. */
  readonly createClient: () => BfdClient;
  /** Every state change of a peer's session. */
  readonly onState: (ev: BfdStateEvent) => void;
  /** A socket/TTL/worker problem, or a configuration the engine refused. */
  readonly onError: (message: string, peer?: string) => void;
}

/** The BFD sessions of the Speaker's peers, keyed by peer name. */
export class PeerBfd {
  private readonly o: PeerBfdOptions;
  private client: BfdClient | undefined;
  private readonly peers = new Map<string, Tracked>();

  constructor(o: PeerBfdOptions) {
    this.o = o;
  }

  /** The session configuration for a peer (defaults applied), or undefined without `bfd`. */
  static sessionConfig(p: BfdPeer): BfdPeerConfig | undefined {
    const b = p.bfd;
    if (b === undefined) return undefined;
    return {
      remoteAddress: p.address,
      ...(p.localAddress !== undefined ? { localAddress: p.localAddress } : {}),
      multihop: b.multihop ?? (p.ebgpMultihop !== undefined && p.ebgpMultihop > 1),
      transmitIntervalMs: b.transmitIntervalMs ?? BFD_OPTIONS.transmitIntervalMs.default,
      receiveIntervalMs: b.receiveIntervalMs ?? BFD_OPTIONS.receiveIntervalMs.default,
      detectMultiplier: b.detectMultiplier ?? BFD_OPTIONS.detectMultiplier.default,
      passive: b.passive ?? BFD_OPTIONS.passive.default,
      ...(b.minimumTtl !== undefined ? { minimumTtl: b.minimumTtl } : {}),
    };
  }

  /** Adds, changes or removes the peer's BFD session to match `p.bfd`. Never throws: errors go to onError. */
  configure(p: BfdPeer): void {
    const config = PeerBfd.sessionConfig(p);
    const tracked = this.peers.get(p.name);
    if (config === undefined) {
      if (tracked) this.remove(p.name);
      return;
    }
    if (tracked && JSON.stringify(tracked.config) === JSON.stringify(config)) return;
    const client = this.ensureClient();
    if (tracked) {
      tracked.config = config;
      client.update(p.name, config).catch((e: Error) => this.o.onError(`BFD for peer ${p.name}: ${e.message}`, p.name));
      return;
    }
    const t: Tracked = { config, detectionTimeMs: 0, stateChanges: 0, upSince: undefined, lastDown: undefined, error: undefined };
    this.peers.set(p.name, t);
    client.add(p.name, config).catch((e: Error) => {
      // kept, so the peer's status says why it runs without BFD (issue 35 N10), never silently
      if (this.peers.get(p.name) === t) t.error = `BFD is not running: ${e.message}`;
      this.o.onError(`BFD for peer ${p.name}: ${e.message}`, p.name);
    });
  }

  /** Removes the peer's session (AdminDown is sent first by the engine). */
  remove(name: string): void {
    if (!this.peers.delete(name)) return;
    this.client?.remove(name).catch((e: Error) => this.o.onError(`BFD for peer ${name}: ${e.message}`, name));
  }

  /** The peer's BFD status, or undefined when BFD is off for it. */
  status(name: string): PeerBfdStatus | undefined {
    const t = this.peers.get(name);
    if (!t) return undefined;
    const i: BfdSessionInfo | undefined = this.client?.info(name);
    return {
      state: i?.state ?? 'Down',
      remoteState: i?.remoteState ?? 'Down',
      diagnostic: describeDiag(i?.localDiag ?? 0),
      multihop: t.config.multihop,
      localDiscriminator: i?.localDiscriminator ?? 0,
      remoteDiscriminator: i?.remoteDiscriminator ?? 0,
      transmitIntervalMs: i?.transmitIntervalMs ?? 0,
      detectionTimeMs: i?.detectionTimeMs ?? 0,
      ttlCheck: i?.ttlCheck ?? 'none',
      ...(i?.ttlCheckReason !== undefined ? { ttlCheckReason: i.ttlCheckReason } : {}),
      ...(i?.error !== undefined ? { error: i.error } : t.error !== undefined ? { error: t.error } : {}),
      discards: i?.discards ?? {},
      ...(i?.lastDiscard !== undefined ? { lastDiscard: i.lastDiscard } : {}),
      stateChanges: t.stateChanges,
      ...(t.upSince !== undefined && i?.state === 'Up' ? { upSince: t.upSince } : {}),
      ...(t.lastDown ? { lastDown: t.lastDown } : {}),
    };
  }

  /** Sets the named (default: all) sessions AdminDown; resolves once Up peers confirmed or after `timeoutMs`. */
  async adminDown(names?: readonly string[], timeoutMs?: number): Promise<void> {
    if (!this.client || this.peers.size === 0) return;
    await this.client.adminDown(names, timeoutMs).catch((e: Error) => this.o.onError(`BFD AdminDown: ${e.message}`));
  }

  /** Leaves AdminDown for the named (default: all) sessions. */
  async adminUp(names?: readonly string[]): Promise<void> {
    if (!this.client) return;
    await this.client.adminUp(names).catch((e: Error) => this.o.onError(`BFD AdminUp: ${e.message}`));
  }

  /** Stops every session and the client. */
  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.peers.clear();
    await c?.close();
  }

  private ensureClient(): BfdClient {
    if (this.client) return this.client;
    const c = this.o.createClient();
    c.on('update', (id: string, change: BfdChange, info: BfdSessionInfo) => this.updated(id, change, info));
    c.on('error', (message: string, id?: string) => this.o.onError(message, id));
    this.client = c;
    return c;
  }

  private updated(name: string, change: BfdChange, info: BfdSessionInfo): void {
    const t = this.peers.get(name);
    if (!t) return;
    const detectionTimeMs = t.detectionTimeMs;
    if (info.detectionTimeMs > 0) t.detectionTimeMs = info.detectionTimeMs;
    if (change.kind !== 'state') return;
    t.stateChanges++;
    const now = this.o.clock.now();
    if (change.to === 'Up') t.upSince = now;
    const failure = change.from === 'Up' && change.to === 'Down' && change.remoteState !== 'AdminDown';
    if (change.from === 'Up') t.lastDown = { at: now, diagnostic: describeDiag(change.diag), remoteState: change.remoteState, detectionTimeMs };
    this.o.onState({
      peer: name,
      from: change.from,
      to: change.to,
      diag: change.diag,
      diagnostic: describeDiag(change.diag),
      remoteState: change.remoteState,
      detectionTimeMs: info.detectionTimeMs > 0 ? info.detectionTimeMs : detectionTimeMs,
      failure,
    });
  }
}
