/**
 * The BFD engine: every session of this system, their sockets, and the demultiplexing of received packets
 * (RFC 5880 §6.3, §6.8.6; RFC 5881 §3–§5 single-hop on port 3784; RFC 5883 multihop on port 4784).
 *
 * - Receiving: one socket per (port, local address) — the configured local address, or the wildcard of the
 *   family — shared by every session using it (SO_REUSEADDR, so another BFD daemon on a wildcard socket of the same
 *   machine keeps working: the kernel prefers the more specific bind). A packet is decoded (bgp/bfd/packet.ts), then
 *   demultiplexed (RFC 5880 §6.8.6): a nonzero Your Discriminator selects the session (unknown: discarded); a zero
 *   one (allowed only with State Down or AdminDown) selects it by source address and hop mode, the only session for
 *   that pair (§6.3: "some combination of other fields, possibly including source addressing information"). A
 *   packet selected by discriminator must also come from the session's peer address and port kind. Once the
 *   session knows bfd.RemoteDiscr, a packet whose My Discriminator differs is discarded (as BIRD's "mismatched
 *   remote id"): one spoofed Down packet from the router's address, which cannot know the discriminator, never
 *   takes a session Down (issue 35 N6). A remote that restarts with a new discriminator is heard again once a
 *   Detection Time passed without its old one (bgp/bfd/session.ts resets bfd.RemoteDiscr, §6.8.1).
 * - Discards are counted by reason for the engine, and for the session they were meant for (selected by
 *   discriminator, else by source address), with the last one's message: the API and metrics show why a session
 *   hears nothing (a router with BFD authentication, a spoofer), not only "Control Detection Time Expired".
 * - Received TTL (RFC 5881 §5, RFC 5883 §5): single-hop sockets accept only TTL / Hop Limit 255; a multihop session
 *   with `minimumTtl` accepts only that minimum from its peer's address. The kernel enforces both with a socket
 *   filter (bgp/bfd/udp.ts). Where it cannot (no libc, a filter refused, more multihop sources than one filter holds:
 *   `maxTtlRules`), the check fails closed: the packets of each session it cannot check are discarded
 *   (`ttlUnchecked`), and its status says `ttlCheck: unavailable` with the reason.
 * - Sending: one socket per session (its own source port in 49152–65535, TTL 255, RFC 5881 §4–§5).
 *
 * The engine runs wherever its Clock and transport are: in production inside the BFD worker thread
 * (bgp/bfd/worker.ts), in tests on the main thread with a FakeClock or real loopback sockets.
 */
import { randomInt } from 'node:crypto';
import type { Clock, TimerHandle } from '../clock.ts';
import type { BfdSessionSettings } from '../peer-config.ts';
import { canonicalAddress } from '../codec/nlri.ts';
import { decodeControlPacket } from './packet.ts';
import type { BfdDiscardReason } from './packet.ts';
import { BfdSession } from './session.ts';
import type { BfdSessionChange, BfdSessionParameters, BfdSessionStatus } from './session.ts';
import { BFD_MULTIHOP_PORT, BFD_SINGLE_HOP_PORT, maxTtlRules } from './udp.ts';
import type { BfdReceiveSocket, BfdSendSocket, BfdTransport, TtlCheck, TtlRule, UdpEndpoint } from './udp.ts';

/**
 * One BFD session as a client asks for it: a peer's BFD settings with every default applied (bgp/peer-config.ts,
 * intervals in milliseconds), and the addresses: the peer's (IPv4 or IPv6, no zone), ours (source of our packets,
 * bind address of the receiving socket; default any).
 */
export type BfdPeerConfig = BfdSessionSettings & { readonly remoteAddress: string; readonly localAddress?: string };

/** Why the demultiplexer discarded a packet (RFC 5880 §6.8.6 session selection, RFC 5881 §5 TTL). */
export type BfdDemuxDiscardReason =
  /** Your Discriminator names no session, or (zero) no session runs to the source address in this hop mode. */
  | 'noSession'
  /** A packet for a session's discriminator from another address or port kind. */
  | 'wrongSource'
  /** My Discriminator differs from the bfd.RemoteDiscr the session knows. */
  | 'remoteDiscriminator'
  /** The session needs a received-TTL check the kernel does not make for it (fail closed). */
  | 'ttlUnchecked';

/** Packets discarded, by reason (RFC 5880 §6.8.6). */
export type BfdDiscards = Partial<Record<BfdDiscardReason | BfdDemuxDiscardReason, number>>;

/** What a notice of the engine reports: a session's state or timers changed, or packets meant for it were discarded. */
export type BfdChange = BfdSessionChange | { readonly kind: 'discards' };

/** A session's status as the engine reports it. */
export interface BfdSessionInfo extends BfdSessionStatus {
  readonly remoteAddress: string;
  readonly localAddress?: string;
  readonly multihop: boolean;
  /**
   * How the received TTL is checked for this session: by the kernel, not at all (multihop without minimumTtl), or
   * unavailable (with the reason): then its packets are discarded (fail closed, RFC 5881 §5).
   */
  readonly ttlCheck: TtlCheck['kind'];
  readonly ttlCheckReason?: string;
  /** Packets meant for this session (by discriminator, else by source address) that were discarded, by reason. */
  readonly discards: BfdDiscards;
  /** The last of them: its reason and what was wrong with it. */
  readonly lastDiscard?: { readonly reason: keyof BfdDiscards; readonly message: string };
  /** Our source port, once the sending socket is open. */
  readonly sourcePort?: number;
  /** Packets the kernel refused to send (no route, ...), since the session started. */
  readonly sendErrors: number;
  /** Why the session cannot run (e.g. its sockets cannot be bound; retried every 5 s). */
  readonly error?: string;
}

/** Engine construction options. */
export interface BfdEngineOptions {
  readonly clock: Clock;
  readonly transport: BfdTransport;
  readonly random?: () => number;
  /**
   * Every state change and timer change of a session, with its status after it; and, at most once a second while
   * they go on, packets meant for a session that were discarded (`discards`).
   */
  readonly onUpdate: (id: string, change: BfdChange, info: BfdSessionInfo) => void;
  /** Problems worth a log line (a socket that cannot be bound, a TTL check that is unavailable). */
  readonly onError?: (id: string | undefined, message: string) => void;
}

/** Checks a session configuration; throws RangeError naming the field. */
export function checkPeerConfig(c: BfdPeerConfig): void {
  canonicalAddress(c.remoteAddress);
  if (c.localAddress !== undefined && (c.localAddress.includes(':') !== c.remoteAddress.includes(':'))) {
    throw new RangeError(`BFD localAddress ${c.localAddress} and peer address ${c.remoteAddress} are of different families`);
  }
  for (const [name, v] of [['transmitIntervalMs', c.transmitIntervalMs], ['receiveIntervalMs', c.receiveIntervalMs]] as const) {
    if (!Number.isInteger(v) || v < 1 || v > 4_294_967) throw new RangeError(`BFD ${name} must be an integer 1..4294967 ms, got ${v}`);
  }
  if (!Number.isInteger(c.detectMultiplier) || c.detectMultiplier < 1 || c.detectMultiplier > 255) throw new RangeError(`BFD detectMultiplier must be 1..255, got ${c.detectMultiplier}`);
  if (c.minimumTtl !== undefined && (!Number.isInteger(c.minimumTtl) || c.minimumTtl < 1 || c.minimumTtl > 255)) throw new RangeError(`BFD minimumTtl must be 1..255, got ${c.minimumTtl}`);
}

function parameters(c: BfdPeerConfig): BfdSessionParameters {
  return { desiredMinTxUs: c.transmitIntervalMs * 1000, requiredMinRxUs: c.receiveIntervalMs * 1000, detectMult: c.detectMultiplier, passive: c.passive };
}

const RETRY_MS = 5000;
/** Discard notices of one session are at most this frequent (a flood of bad packets is not a flood of notices). */
const DISCARD_NOTICE_MS = 1000;

interface Receiver {
  readonly key: string;
  readonly family: 4 | 6;
  readonly multihop: boolean;
  socket: BfdReceiveSocket | undefined;
  opening: Promise<BfdReceiveSocket> | undefined;
  readonly users: Set<Entry>;
  ttl: TtlCheck;
}

interface Entry {
  readonly id: string;
  cfg: BfdPeerConfig;
  readonly remote: string;
  readonly session: BfdSession;
  receiver: Receiver | undefined;
  sender: BfdSendSocket | undefined;
  error: string | undefined;
  retry: TimerHandle | undefined;
  closed: boolean;
  sendErrors: number;
  /** Why the kernel does not check this session's received TTL though it needs a check (its packets are discarded). */
  ttlUnchecked: string | undefined;
  discards: BfdDiscards;
  lastDiscard: BfdSessionInfo['lastDiscard'];
  /** A discard notice went out less than DISCARD_NOTICE_MS ago; `discardPending`: more discards since. */
  discardNotice: TimerHandle | undefined;
  discardPending: boolean;
}

/** All BFD sessions of this system. Methods reject with RangeError for bad configuration. */
export class BfdEngine {
  private readonly o: BfdEngineOptions;
  private readonly byId = new Map<string, Entry>();
  private readonly byDiscriminator = new Map<number, Entry>();
  private readonly byPeer = new Map<string, Entry>();
  private readonly receivers = new Map<string, Receiver>();
  private readonly waiters = new Set<() => void>();
  private readonly discarded: BfdDiscards = {};
  private closed = false;

  constructor(o: BfdEngineOptions) {
    this.o = o;
  }

  /** Packets discarded before reaching a session, by reason. */
  get discards(): Readonly<BfdDiscards> {
    return this.discarded;
  }

  /**
   * Adds and starts a session. Rejects with RangeError for a bad configuration, a duplicate id, or a second session
   * for the same peer address and hop mode. A socket that cannot be bound does not reject: the session reports the
   * error in its status and retries every 5 s.
   */
  async add(id: string, cfg: BfdPeerConfig): Promise<void> {
    if (this.closed) throw new RangeError('BFD engine is closed');
    checkPeerConfig(cfg);
    if (this.byId.has(id)) throw new RangeError(`BFD session ${JSON.stringify(id)} already exists`);
    const remote = canonicalAddress(cfg.remoteAddress);
    const peerKey = this.peerKey(cfg.multihop, remote);
    const other = this.byPeer.get(peerKey);
    if (other) throw new RangeError(`BFD session ${JSON.stringify(other.id)} already runs ${cfg.multihop ? 'multihop' : 'single-hop'} to ${remote}; one session per peer address and hop mode`);
    const discriminator = this.newDiscriminator();
    const entry: Entry = {
      id,
      cfg,
      remote,
      receiver: undefined,
      sender: undefined,
      error: undefined,
      retry: undefined,
      closed: false,
      sendErrors: 0,
      ttlUnchecked: undefined,
      discards: {},
      lastDiscard: undefined,
      discardNotice: undefined,
      discardPending: false,
      session: new BfdSession({
        ...parameters(cfg),
        localDiscriminator: discriminator,
        clock: this.o.clock,
        ...(this.o.random ? { random: this.o.random } : {}),
        send: (packet) => entry.sender?.send(packet),
        onChange: (change) => this.changed(entry, change),
      }),
    };
    this.byId.set(id, entry);
    this.byDiscriminator.set(discriminator, entry);
    this.byPeer.set(peerKey, entry);
    await this.open(entry);
  }

  /**
   * Changes a session: new intervals, multiplier or role go to the running session (a Poll Sequence, RFC 5880
   * §6.8.3); a new address, local address or hop mode replaces it. Rejects like add().
   */
  async update(id: string, cfg: BfdPeerConfig): Promise<void> {
    checkPeerConfig(cfg);
    const entry = this.mustGet(id);
    const old = entry.cfg;
    if (old.remoteAddress !== cfg.remoteAddress || old.localAddress !== cfg.localAddress || old.multihop !== cfg.multihop) {
      await this.remove(id);
      await this.add(id, cfg);
      return;
    }
    entry.session.setParameters(parameters(cfg));
    entry.cfg = cfg;
    if (old.minimumTtl !== cfg.minimumTtl && entry.receiver) this.applyTtlRules(entry.receiver);
  }

  /**
   * Removes a session: one AdminDown packet (so the peer does not take it for a failure, RFC 5882 §3.2), then it
   * stops and its sockets close. Unknown ids are ignored.
   */
  async remove(id: string): Promise<void> {
    const entry = this.byId.get(id);
    if (!entry) return;
    entry.session.adminDown();
    entry.session.stop();
    entry.closed = true;
    this.o.clock.clearTimer(entry.retry);
    this.o.clock.clearTimer(entry.discardNotice);
    this.byId.delete(id);
    this.byDiscriminator.delete(entry.session.localDiscriminator);
    this.byPeer.delete(this.peerKey(entry.cfg.multihop, entry.remote));
    await entry.sender?.close();
    entry.sender = undefined;
    await this.release(entry);
  }

  /**
   * Sets sessions AdminDown (RFC 5880 §6.8.16; all when `ids` is omitted) and resolves once each peer that was Up
   * has answered the Poll announcing it (so it has seen AdminDown), or after `timeoutMs` (default 1000).
   */
  adminDown(ids?: readonly string[], timeoutMs = 1000): Promise<void> {
    const entries = this.select(ids);
    for (const e of entries) e.session.adminDown();
    const done = (): boolean => entries.every((e) => e.closed || !e.session.status().pollActive);
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.o.clock.setTimer(() => finish(), timeoutMs);
      const check = (): void => {
        if (done()) finish();
      };
      const finish = (): void => {
        this.o.clock.clearTimer(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** Leaves AdminDown (all sessions when `ids` is omitted): they start over from Down. */
  adminUp(ids?: readonly string[]): void {
    for (const e of this.select(ids)) e.session.adminUp();
  }

  /** Status of one session, or undefined. */
  info(id: string): BfdSessionInfo | undefined {
    const e = this.byId.get(id);
    return e ? this.infoOf(e) : undefined;
  }

  /** Status of every session, by id. */
  all(): Record<string, BfdSessionInfo> {
    const out: Record<string, BfdSessionInfo> = {};
    for (const [id, e] of this.byId) out[id] = this.infoOf(e);
    return out;
  }

  /** Stops every session (no AdminDown: call adminDown() first for that) and closes every socket. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.byId.values()];
    for (const e of entries) {
      e.session.stop();
      e.closed = true;
      this.o.clock.clearTimer(e.retry);
      this.o.clock.clearTimer(e.discardNotice);
    }
    for (const w of [...this.waiters]) w();
    await Promise.all(entries.map((e) => e.sender?.close()));
    this.byId.clear();
    this.byDiscriminator.clear();
    this.byPeer.clear();
    const receivers = [...this.receivers.values()];
    this.receivers.clear();
    await Promise.all(receivers.map(async (r) => (r.socket ?? (await r.opening?.catch(() => undefined)))?.close()));
  }

  // --- internals ---

  private peerKey(multihop: boolean, remote: string): string {
    return `${multihop ? 'multihop' : 'single-hop'} ${remote}`;
  }

  private newDiscriminator(): number {
    for (;;) {
      const d = randomInt(1, 0x1_0000_0000);
      if (!this.byDiscriminator.has(d)) return d;
    }
  }

  private select(ids: readonly string[] | undefined): Entry[] {
    if (ids === undefined) return [...this.byId.values()];
    return ids.map((id) => this.byId.get(id)).filter((e): e is Entry => e !== undefined);
  }

  private mustGet(id: string): Entry {
    const e = this.byId.get(id);
    if (!e) throw new RangeError(`unknown BFD session ${JSON.stringify(id)}`);
    return e;
  }

  private infoOf(e: Entry): BfdSessionInfo {
    const ttlCheck: TtlCheck['kind'] = e.ttlUnchecked !== undefined ? 'unavailable' : e.receiver !== undefined && minimumTtl(e.cfg) !== undefined ? 'kernel' : 'none';
    return {
      ...e.session.status(),
      remoteAddress: e.remote,
      ...(e.cfg.localAddress !== undefined ? { localAddress: e.cfg.localAddress } : {}),
      multihop: e.cfg.multihop,
      ttlCheck,
      ...(e.ttlUnchecked !== undefined ? { ttlCheckReason: e.ttlUnchecked } : {}),
      discards: { ...e.discards },
      ...(e.lastDiscard !== undefined ? { lastDiscard: e.lastDiscard } : {}),
      ...(e.sender ? { sourcePort: e.sender.local.port } : {}),
      sendErrors: e.sendErrors,
      ...(e.error !== undefined ? { error: e.error } : {}),
    };
  }

  private changed(e: Entry, change: BfdChange): void {
    if (e.closed) return;
    for (const w of [...this.waiters]) w();
    this.o.onUpdate(e.id, change, this.infoOf(e));
  }

  private report(e: Entry | undefined, message: string): void {
    this.o.onError?.(e?.id, message);
  }

  /** Opens the session's sockets and starts it; on failure records the error and retries. */
  private async open(e: Entry): Promise<void> {
    const family = e.remote.includes(':') ? 6 : 4;
    try {
      if (!e.receiver) e.receiver = await this.acquire(e, family);
      if (!e.sender) {
        // send errors (no route, unreachable) are normal while a path is down: counted, the Detection Time decides
        const remote = { address: e.remote, port: e.cfg.multihop ? BFD_MULTIHOP_PORT : BFD_SINGLE_HOP_PORT };
        e.sender = await this.o.transport.openSender({ remote, ...(e.cfg.localAddress !== undefined ? { localAddress: e.cfg.localAddress } : {}), ttl: 255 }, () => e.sendErrors++);
      }
      if (e.closed) {
        await e.sender.close();
        return;
      }
      const hadError = e.error !== undefined;
      e.error = undefined;
      e.session.start();
      if (hadError) this.o.onUpdate(e.id, { kind: 'timers' }, this.infoOf(e));
    } catch (err) {
      if (e.closed) return;
      e.error = `cannot open BFD sockets for ${e.remote}: ${err instanceof Error ? err.message : String(err)}`;
      this.report(e, e.error);
      this.o.onUpdate(e.id, { kind: 'timers' }, this.infoOf(e));
      e.retry = this.o.clock.setTimer(() => {
        e.retry = undefined;
        if (!e.closed) void this.open(e);
      }, RETRY_MS);
    }
  }

  private async acquire(e: Entry, family: 4 | 6): Promise<Receiver> {
    const port = e.cfg.multihop ? BFD_MULTIHOP_PORT : BFD_SINGLE_HOP_PORT;
    const address = e.cfg.localAddress ?? (family === 4 ? '0.0.0.0' : '::');
    const key = `${address} ${port}`;
    let r = this.receivers.get(key);
    if (!r) {
      const fresh: Receiver = { key, family, multihop: e.cfg.multihop, socket: undefined, opening: undefined, users: new Set(), ttl: { kind: 'none' } };
      fresh.opening = this.o.transport.openReceiver({ address, port }, (packet, from) => this.received(fresh, packet, from));
      this.receivers.set(key, fresh);
      r = fresh;
    }
    try {
      r.socket ??= await r.opening;
    } catch (err) {
      if (this.receivers.get(key) === r && r.users.size === 0) this.receivers.delete(key);
      throw err;
    }
    r.users.add(e);
    this.applyTtlRules(r);
    return r;
  }

  private async release(e: Entry): Promise<void> {
    const r = e.receiver;
    e.receiver = undefined;
    if (!r) return;
    r.users.delete(e);
    e.ttlUnchecked = undefined;
    if (r.users.size > 0) {
      this.applyTtlRules(r);
      return;
    }
    this.receivers.delete(r.key);
    await r.socket?.close();
  }

  /**
   * Puts the received-TTL rules of the receiver's sessions into its kernel filter: 255 for every source of a
   * single-hop socket; each multihop session's `minimumTtl` for its peer's address, as many as one filter holds
   * (`maxTtlRules`). Every session needing a check the kernel does not make is marked `ttlUnchecked` (fail closed).
   */
  private applyTtlRules(r: Receiver): void {
    if (!r.socket) return;
    const needing = [...r.users].filter((u) => minimumTtl(u.cfg) !== undefined);
    const capacity = r.multihop ? maxTtlRules(r.family) : needing.length;
    const covered = needing.slice(0, capacity);
    const rules: TtlRule[] = r.multihop ? covered.map((u) => ({ source: u.remote, minTtl: minimumTtl(u.cfg) as number })) : needing.length > 0 ? [{ minTtl: 255 }] : [];
    const before = r.ttl.kind;
    const ttl = r.socket.setTtlRules(rules);
    r.ttl = ttl;
    for (const u of r.users) {
      const was = u.ttlUnchecked;
      if (minimumTtl(u.cfg) === undefined) u.ttlUnchecked = undefined;
      else if (ttl.kind === 'unavailable') u.ttlUnchecked = `the received TTL cannot be checked on ${r.key}: ${ttl.reason}; this session's packets are discarded (RFC 5881 §5: fail closed)`;
      else if (!covered.includes(u)) u.ttlUnchecked = `the kernel's TTL filter on ${r.key} holds ${capacity} multihop sources with minimumTtl and ${needing.length} need one; this session's packets are discarded (fail closed): drop minimumTtl from some peers or give them another localAddress`;
      else u.ttlUnchecked = undefined;
      if (u.ttlUnchecked !== was) this.changed(u, { kind: 'timers' });
    }
    if (ttl.kind === 'unavailable' && before !== 'unavailable') {
      this.report(undefined, `received TTL cannot be checked on ${r.key}: ${ttl.reason}; the packets of its sessions are discarded (fail closed)`);
    }
  }

  /** Demultiplexes one received datagram (RFC 5880 §6.8.6; see the module comment) and hands it to its session. */
  private received(r: Receiver, buf: Buffer, from: UdpEndpoint): void {
    let source: string | undefined;
    try {
      source = canonicalAddress(from.address);
    } catch {
      source = undefined;
    }
    const hop = r.multihop ? 'multihop' : 'single-hop';
    const bySource = source === undefined ? undefined : this.byPeer.get(this.peerKey(r.multihop, source));
    const d = decodeControlPacket(buf);
    if (!d.ok) return this.discard(bySource, d.reason, d.message);
    if (source === undefined) return this.discard(undefined, 'wrongSource', `source ${from.address} is not an IP address`);
    const p = d.packet;
    let entry: Entry;
    if (p.yourDiscriminator !== 0) {
      const e = this.byDiscriminator.get(p.yourDiscriminator);
      if (!e) return this.discard(bySource, 'noSession', `Your Discriminator ${p.yourDiscriminator} names no session of ours`);
      if (e.remote !== source || e.cfg.multihop !== r.multihop) {
        return this.discard(e, 'wrongSource', `a ${hop} packet for this session's discriminator came from ${source}, not from the peer`);
      }
      entry = e;
    } else {
      if (!bySource) return this.discard(undefined, 'noSession', `no ${hop} session to ${source}`);
      entry = bySource;
    }
    if (entry.ttlUnchecked !== undefined) return this.discard(entry, 'ttlUnchecked', entry.ttlUnchecked);
    const known = entry.session.remoteDiscriminator;
    if (known !== 0 && p.myDiscriminator !== known) {
      return this.discard(entry, 'remoteDiscriminator', `My Discriminator ${p.myDiscriminator} is not the peer's ${known} (spoofed, or the peer restarted: then its packets are heard after one Detection Time)`);
    }
    entry.session.receive(p);
  }

  /** Counts a discarded packet for the engine and for the session it was meant for, if any (then a notice). */
  private discard(e: Entry | undefined, reason: keyof BfdDiscards, message: string): void {
    this.discarded[reason] = (this.discarded[reason] ?? 0) + 1;
    if (e === undefined || e.closed) return;
    e.discards[reason] = (e.discards[reason] ?? 0) + 1;
    e.lastDiscard = { reason, message };
    if (e.discardNotice !== undefined) {
      e.discardPending = true;
      return;
    }
    this.changed(e, { kind: 'discards' });
    const quiet = (): void => {
      e.discardNotice = undefined;
      if (!e.discardPending || e.closed) return;
      e.discardPending = false;
      this.changed(e, { kind: 'discards' });
      e.discardNotice = this.o.clock.setTimer(quiet, DISCARD_NOTICE_MS);
    };
    e.discardNotice = this.o.clock.setTimer(quiet, DISCARD_NOTICE_MS);
  }
}

/** The received TTL a session needs (RFC 5881 §5: 255 single-hop; RFC 5883 §5: its minimumTtl), or none. */
function minimumTtl(c: BfdPeerConfig): number | undefined {
  return c.multihop ? c.minimumTtl : 255;
}
