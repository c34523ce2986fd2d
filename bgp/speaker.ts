/**
 * Speaker: Herald's BGP speaker. Owns one Session (RFC 4271 §8 FSM, by the session layer) and one Adj-RIB-Out per
 * configured peer, fans the whole desired route set out to every peer through the per-peer export rules, and
 * implements graceful restart as the restarting speaker (RFC 4724, with the RFC 8538 N bit), graceful shutdown
 * (RFC 8326) and the stop modes (bgp/stop-modes.ts: a restart keeps the routers' forwarding state, a departure moves
 * traffic away first).
 *
 * Data flow: setRoutes(desired) or updateRoutes(changed, removed) → the route table (bgp/rib/route-table.ts: validated
 * once, columnar, shared by every peer) → its diff to each peer's AdjRibOut.setDesired() → the session pulls UPDATEs
 * one at a time through the TxSource (bgp/rib/adj-rib-out.ts) while its socket is writable.
 *
 * Events (for metrics and logs):
 * - 'peerState'   { peer, from, to, reason }          every session state change
 * - 'updateSent'  { peer, kind, family, bytes, prefixes, packMs }   every UPDATE handed to a session
 * - 'endOfRib'    { peer, family }                    End-of-RIB received from a peer
 * - 'routeRefresh'{ peer, family }                    ROUTE-REFRESH received (we resend that family)
 * - 'drained'     { }                                 drain() finished withdrawing
 * - 'bfdState'    BfdStateEvent                       a peer's BFD session changed state (bgp/bfd/peers.ts)
 * - 'unsentRoutes'{ peer, reason, example }           routes toward a peer cannot be encoded (once per session and
 *                                                     reason; PeerStatus.unsentRoutes counts them; the others go out)
 *
 * BFD (RFC 5880/5881/5883, bgp/bfd/): a peer with `bfd` gets a BFD session in the BFD worker thread; when it goes
 * from Up to Down (a forwarding-path failure), the BGP session is reset with Cease / BFD Down (RFC 5882 §10.2,
 * RFC 9384). bfdAdminDown()/bfdAdminUp() hold the sessions administratively down around a restart (RFC 5882 §3.2).
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { BGP_PORT, CeaseSubcode } from './constants.ts';
import type { Family } from './constants.ts';
import type { Negotiated } from './codec/open.ts';
import type { CodecContext, UpdateDecodeResult } from './codec/types.ts';
import { realClock } from './clock.ts';
import type { Clock } from './clock.ts';
import type { StateReason } from './fsm/state.ts';
import { AdjRibOut } from './rib/adj-rib-out.ts';
import { PackSchedule } from './rib/pack-schedule.ts';
import { RouteTable } from './rib/route-table.ts';
import type { DesiredDiff, RouteEdit } from './rib/route-table.ts';
import type { ExportedRoute } from './rib/export.ts';
import type { ExportPeer } from './rib/export.ts';
import type { Route } from './rib/route.ts';
import { Session } from './session/session.ts';
import { FAMILY_OF_AFI, maxMessageLength } from './session/open-exchange.ts';
import type { SessionOptions } from './session/session.ts';
import { peerEnding } from './stop-modes.ts';
import type { PeerEnding, StopMode, StopOutcome } from './stop-modes.ts';
import { BgpListener } from './session/listener.ts';
import { peerStatus } from './peer-status.ts';
import { changedFields, GRACEFUL_RESTART_OPTIONS, PEER_OPTIONS, resetsSession } from './peer-config.ts';
import { BfdHandle } from './bfd/handle.ts';
import { PeerBfd } from './bfd/peers.ts';
import type { BfdStateEvent } from './bfd/peers.ts';


export type { PeerConfig, PeerListener, PeerSession, PeerStatus, SpeakerOptions } from './speaker-types.ts';
import type { PeerConfig, PeerListener, PeerSession, PeerStatus, SpeakerOptions } from './speaker-types.ts';

/** How often a departure looks whether the withdrawals are out (ms of clock time). */
const SEND_POLL_MS = 20;

/** Throws for an AS number outside 1..4294967295 (RFC 6793 four-octet AS numbers; 0 is reserved, RFC 7607). */
function checkAs(asn: number): void {
  if (!Number.isInteger(asn) || asn < 1 || asn > 0xffffffff) throw new Error(`invalid localAs ${asn}`);
}

/** "::ffff:192.0.2.1" (an IPv4 peer on a dual-stack socket) → "192.0.2.1"; anything else unchanged. */
function unmapIPv4(addr: string | undefined): string | undefined {
  if (addr === undefined) return undefined;
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  return m ? m[1] : addr;
}
const DEFAULT_FAMILIES: readonly Family[] = PEER_OPTIONS.families.default;

interface PeerEntry {
  cfg: PeerConfig;
  session: PeerSession;
  readonly rib: AdjRibOut;
  readonly endOfRibReceived: Set<Family>;
  /** The object handed to the session as options.gracefulRestart; the R bit is cleared after our first EoR. */
  grOptions: { restartTimeSec: number; restarting: boolean; forwardingPreserved: boolean; notification: boolean } | undefined;
  /** Our first End-of-RIB to this peer went out: the restart is over for it (later OPENs carry R = 0). */
  restartDone: boolean;
  /** What the last session agreed and its local address: what the next session most likely gets. */
  lastSession: { readonly n: Negotiated; readonly localAddress: string | undefined } | undefined;
  /** When the table is packed for the next session while there is none (see `packForNextSession`). */
  readonly packing: PackSchedule;
}

/**
 * Herald's BGP speaker. See the module comment for the data flow and events. Methods never throw for a peer's
 * protocol trouble (that is a state change); they throw ConfigError-like plain Errors for bad arguments
 * (unknown or duplicate peer names) and RouteError for malformed routes (nothing is applied then).
 */
export class Speaker extends EventEmitter {
  readonly localAs: number;
  readonly bgpIdentifier: string;
  private readonly clock: Clock;
  private readonly peersByName = new Map<string, PeerEntry>();
  /** The desired routes: the one full table, shared by every peer's Adj-RIB-Out. */
  private readonly table = new RouteTable();
  private initialSyncDone = false;
  private gracefulShutdown = false;
  private drained = false;
  private closed = false;
  private stopping: Promise<StopOutcome> | undefined;
  private readonly restarting: boolean;
  private readonly createSession: (options: SessionOptions) => PeerSession;
  private listener: PeerListener | undefined;
  private listenerReady: Promise<void> | undefined;
  private readonly bfd: PeerBfd;

  constructor(opts: SpeakerOptions) {
    super();
    checkAs(opts.localAs);
    this.localAs = opts.localAs;
    this.bgpIdentifier = opts.bgpIdentifier;
    this.clock = opts.clock ?? realClock;
    this.restarting = opts.gracefulRestart?.restarting ?? false;
    this.createSession = opts.createSession ?? ((o) => new Session(o));
    this.bfd = new PeerBfd({
      clock: this.clock,
      createClient: opts.createBfd ?? (() => BfdHandle.start()),
      onState: (ev) => this.bfdStateChanged(ev),
      onError: (message) => this.emitError(new Error(message)),
    });
    if (opts.listen !== undefined) {
      const make = opts.createListener ?? ((address, port) => new BgpListener({ address, port }));
      this.listener = make(opts.listen.address, opts.listen.port);
      if (opts.deferListen !== true) {
        this.listenerReady = this.listener.listen();
        // surfaced by ready(); also as an 'error' event when someone listens (an unheard 'error' would throw)
        this.listenerReady.catch((err: unknown) => this.emitError(err));
      }
    }
  }

  /**
   * Resolves once the listener (if any) is accepting connections. Rejects if it could not bind. With
   * `deferListen`, it resolves at once until the first listen() call, then follows it.
   */
  async ready(): Promise<void> {
    await this.listenerReady;
  }

  /**
   * Binds the listener: the first bind with `deferListen`, or again after ready() rejected (e.g. EADDRINUSE while
   * another process held the port); ready() then follows this attempt. Resolves once bound (at once when it is
   * bound already), rejects with the OS error. No-op without a listener or after stop().
   */
  listen(): Promise<void> {
    if (this.listener === undefined || this.closed) return Promise.resolve();
    this.listenerReady = this.listener.listen();
    return this.listenerReady;
  }

  /** Adds a peer and starts its session. Throws Error on a duplicate name. */
  addPeer(cfg: PeerConfig): void {
    if (this.closed) throw new Error('speaker is shut down');
    if (this.peersByName.has(cfg.name)) throw new Error(`peer ${JSON.stringify(cfg.name)} already exists`);
    if (cfg.localAs !== undefined) checkAs(cfg.localAs);
    const grOptions = this.grOptionsFor(cfg, false);
    const entry: PeerEntry = {
      packing: new PackSchedule(this.clock, () => this.packForNextSession(entry)),
      cfg,
      session: this.createSession(this.sessionOptions(cfg, grOptions)),
      rib: new AdjRibOut(this.table, { onUnsendable: (reason, example) => this.emit('unsentRoutes', { peer: cfg.name, reason, example }) }),
      endOfRibReceived: new Set(),
      grOptions,
      restartDone: false,
      lastSession: undefined,
    };
    if (this.initialSyncDone) entry.rib.markInitialSyncDone();
    if (this.drained) entry.rib.withhold(true);
    this.peersByName.set(cfg.name, entry);
    this.attachSession(entry);
    this.bfd.configure(cfg);
    entry.packing.soon();
  }

  /**
   * Packs the table toward `entry`'s next session while it has none (AdjRibOut.prepare, bgp/rib/packed-table.ts),
   * so that the peer gets it at the speed of the socket once the session is up (when: bgp/rib/pack-schedule.ts).
   * Skipped while the next session's local address is unknown (no session yet and none configured): the next hops
   * depend on it.
   */
  private packForNextSession(entry: PeerEntry): void {
    if (entry.rib.active || this.closed || this.peersByName.get(entry.cfg.name) !== entry) return;
    const next = this.expectedSession(entry);
    if (next !== undefined) entry.rib.prepare(next.peer, next.maxLength);
  }

  /**
   * The export context and maximum message length the next session of `entry` most likely gets: the last session's;
   * before any, the configured families with 4-octet AS numbers (RFC 6793, which Herald always offers) and 4096-octet
   * messages. Undefined when the local address is unknown.
   */
  private expectedSession(entry: PeerEntry): { peer: ExportPeer; maxLength: number } | undefined {
    const last = entry.lastSession;
    const n = last?.n ?? { peerAs: entry.cfg.peerAs, fourOctetAs: true, families: [...(entry.cfg.families ?? DEFAULT_FAMILIES)], extendedMessage: false };
    const localAddress = last?.localAddress ?? entry.cfg.localAddress;
    if (localAddress === undefined) return undefined;
    return { peer: this.exportPeerOf(entry, n, localAddress), maxLength: maxMessageLength(n) };
  }

  /** The graceful restart options handed to a new session of this peer (undefined: not advertised). */
  private grOptionsFor(c: PeerConfig, restartDone: boolean): PeerEntry['grOptions'] {
    if (c.gracefulRestart === false) return undefined;
    return {
      restartTimeSec: c.gracefulRestart?.restartTimeSec ?? GRACEFUL_RESTART_OPTIONS.restartTimeSec.default,
      // R bit only until our first End-of-RIB to this peer went out after a restart (RFC 4724 §3, §4.1)
      restarting: this.restarting && !restartDone,
      forwardingPreserved: true,
      notification: c.gracefulRestart?.notification ?? GRACEFUL_RESTART_OPTIONS.notification.default,
    };
  }

  private sessionOptions(c: PeerConfig, gr: PeerEntry['grOptions']): SessionOptions {
    return {
      name: c.name,
      localAs: c.localAs ?? this.localAs,
      peerAs: c.peerAs,
      bgpIdentifier: c.bgpIdentifier ?? this.bgpIdentifier,
      remoteAddress: c.address,
      remotePort: c.port ?? BGP_PORT,
      localAddress: c.localAddress,
      localPort: c.localPort,
      holdTimeSec: c.holdTimeSec ?? PEER_OPTIONS.holdTimeSec.default,
      keepaliveTimeSec: c.keepaliveTimeSec,
      connectRetryTimeSec: c.connectRetryTimeSec ?? PEER_OPTIONS.connectRetryTimeSec.default,
      passive: c.passive ?? PEER_OPTIONS.passive.default,
      md5Password: c.md5Password,
      ebgpMultihop: c.ebgpMultihop,
      ttlSecurity: c.ttlSecurity,
      families: [...(c.families ?? DEFAULT_FAMILIES)],
      gracefulRestart: gr,
      extendedMessage: c.extendedMessage ?? PEER_OPTIONS.extendedMessage.default,
      maxPrefixes: c.maxPrefixes,
      clock: this.clock,
    };
  }

  private exportPeer(entry: PeerEntry, n: Negotiated): ExportPeer {
    return this.exportPeerOf(entry, n, entry.session.localAddress ?? entry.cfg.localAddress);
  }

  private exportPeerOf(entry: PeerEntry, n: Pick<Negotiated, 'peerAs' | 'fourOctetAs' | 'families'>, localAddress: string | undefined): ExportPeer {
    return {
      name: entry.cfg.name,
      localAs: entry.cfg.localAs ?? this.localAs,
      peerAs: n.peerAs,
      fourOctetAs: n.fourOctetAs,
      families: new Set(n.families),
      localAddress: unmapIPv4(localAddress),
      nextHopIPv4: entry.cfg.nextHopIPv4,
      nextHopIPv6: entry.cfg.nextHopIPv6,
      gracefulShutdown: this.gracefulShutdown,
    };
  }

  /** Wires the entry's (new) session to its Adj-RIB-Out and the Speaker's events, registers and starts it. */
  private attachSession(entry: PeerEntry): void {
    const session = entry.session;
    const name = entry.cfg.name;
    session.setTxSource({
      nextMessage: (_ctx: CodecContext, maxLength: number): Buffer | undefined => {
        if (entry.session !== session) return undefined;
        const t0 = performance.now();
        const buf = entry.rib.nextMessage(maxLength);
        if (buf === undefined) return undefined;
        const info = entry.rib.lastSent!;
        // after our first End-of-RIB the restart is over: later OPENs carry R = 0 (RFC 4724 §4.1)
        if (info.kind === 'endOfRib') {
          entry.restartDone = true;
          if (entry.grOptions !== undefined) entry.grOptions.restarting = false;
        }
        this.emit('updateSent', { peer: name, ...info, packMs: performance.now() - t0 });
        return buf;
      },
    });
    session.on('stateChange', (ev: { from: string; to: string; reason: StateReason }) => {
      if (entry.session !== session) return;
      this.emit('peerState', { peer: name, ...ev });
    });
    session.on('established', (n: Negotiated) => {
      if (entry.session !== session) return;
      entry.endOfRibReceived.clear();
      entry.lastSession = { n, localAddress: session.localAddress };
      entry.rib.start(this.exportPeer(entry, n), maxMessageLength(n));
      session.kickTx();
    });
    session.on('down', () => {
      if (entry.session !== session) return;
      entry.rib.reset();
      entry.endOfRibReceived.clear();
      entry.packing.soon();
    });
    session.on('routeRefresh', (rr: { afi: number; safi: number; subtype?: number }) => {
      if (entry.session !== session) return;
      const family = FAMILY_OF_AFI[`${rr.afi}/${rr.safi}`];
      if (family === undefined) return;
      // RFC 7313 BoRR/EoRR (subtypes 1, 2) are the peer's own markers, not requests
      if (rr.subtype !== undefined && rr.subtype !== 0) return;
      this.emit('routeRefresh', { peer: name, family });
      entry.rib.refresh(family);
      session.kickTx();
    });
    session.on('endOfRib', (family: Family) => {
      if (entry.session !== session) return;
      entry.endOfRibReceived.add(family);
      this.emit('endOfRib', { peer: name, family });
    });
    session.on('update', (_r: UpdateDecodeResult) => {
      /* counted by the session; Herald installs no received routes */
    });
    session.on('error', (err: unknown) => this.emitError(err));
    this.listener?.register(entry.cfg.address, session);
    session.start();
  }

  /**
   * Changes a peer's configuration; what each changed field does is its row of PEER_OPTIONS (bgp/peer-config.ts). Only
   * `export` and `bfd` fields changed (next hops, BFD): the session stays up, changed routes are re-announced and the
   * BFD session is reconfigured. Anything else: the session is closed with Cease 6 (Other Configuration Change,
   * RFC 4486) and a new one started. Throws Error for an unknown peer.
   */
  updatePeer(cfg: PeerConfig): void {
    const entry = this.mustGet(cfg.name);
    if (cfg.localAs !== undefined) checkAs(cfg.localAs);
    const old = entry.cfg;
    const sessionChange = resetsSession(changedFields(old, cfg));
    entry.cfg = cfg;
    this.bfd.configure(cfg);
    if (!sessionChange) {
      const n = entry.session.negotiated;
      if (entry.rib.active && n !== undefined) {
        entry.rib.setExportPeer(this.exportPeer(entry, n));
        entry.session.kickTx();
      } else if (!entry.rib.active) {
        entry.packing.afterChange(); // the next session's next hops changed
      }
      return;
    }
    const oldSession = entry.session;
    this.listener?.unregister(old.address);
    entry.rib.reset();
    void oldSession.stop({ subcode: CeaseSubcode.OtherConfigurationChange }).catch(() => undefined);
    entry.grOptions = this.grOptionsFor(cfg, entry.restartDone);
    entry.session = this.createSession(this.sessionOptions(cfg, entry.grOptions));
    entry.lastSession = undefined;
    this.attachSession(entry);
    entry.packing.soon();
  }

  /**
   * Removes a peer: Cease 3 Peer De-configured (RFC 4486; inside a Hard Reset where N was negotiated, RFC 8538 §5),
   * then forgets it. Throws Error for an unknown peer.
   */
  async removePeer(name: string): Promise<void> {
    const entry = this.mustGet(name);
    this.peersByName.delete(name);
    this.bfd.remove(name);
    this.listener?.unregister(entry.cfg.address);
    entry.packing.cancel();
    entry.rib.reset();
    await entry.session.stop({ subcode: CeaseSubcode.PeerDeconfigured });
  }

  /**
   * Replaces the whole desired route set (MetalLB Session.Set style). Every route is validated first; on any
   * malformed route a RouteError listing the problems is thrown and nothing changes. A later duplicate of the
   * same prefix wins. Unchanged routes cost one signature lookup; changed ones are queued per peer.
   */
  setRoutes(routes: readonly Route[] | ReadonlyMap<string, Route>): void {
    this.giveDiff(this.table.replace(routes.values()));
  }

  /**
   * Incremental form of {@link setRoutes}: upserts `changed` (keyed by `route.prefix`; a later duplicate wins) and
   * removes the routes whose prefix is in `removed`, leaving every other desired route untouched. Cost is
   * O(changed + removed) — independent of the size of the desired set — so a caller that knows what changed (the
   * daemon, from its controller) pays per change, not per table. A prefix both in `changed` and `removed` ends up
   * removed. Every route is validated first; on any malformed route a RouteError listing the problems is thrown and
   * nothing changes. An unchanged route (same attribute signature) costs one lookup.
   */
  updateRoutes(changed: Iterable<Route>, removed: Iterable<string> = []): void {
    this.giveDiff(this.table.update(changed, removed));
  }

  /**
   * The changes `stage` puts in a route table edit (bgp/rib/route-table.ts `RouteEdit`: routes added or replaced,
   * prefixes removed; with `replace`, every route it does not add goes), applied at once. The form the speaker
   * thread uses for its route batches (bgp/speaker-thread/route-batch.ts). Throws RouteError on a malformed route, and
   * what `stage` throws: nothing is applied then.
   */
  applyRoutes(stage: (edit: RouteEdit) => void, opts: { readonly replace: boolean }): void {
    this.giveDiff(this.table.change(stage, opts));
  }

  /** Tells every peer what changed in the table (a drained peer holds nothing whatever it says). */
  private giveDiff(diff: DesiredDiff): void {
    if (diff.changed.length === 0 && diff.removed.length === 0) return;
    for (const entry of this.peersByName.values()) {
      entry.rib.setDesired(diff);
      this.kick(entry);
    }
  }

  /** Sends what a peer's Adj-RIB-Out has pending over its session, or packs its table later without one. */
  private kick(entry: PeerEntry): void {
    if (entry.rib.hasPending()) entry.session.kickTx();
    else if (!entry.rib.active) entry.packing.afterChange();
  }

  /** The desired routes currently set (validated), in table order. */
  routes(): Route[] {
    return this.table.routes();
  }

  /**
   * The first full desired set has been given (decisions.md): from now on each peer gets End-of-RIB per family once
   * its initial table is out (RFC 4724 §4.1); after that End-of-RIB, that peer's later OPENs no longer set the R bit.
   */
  markInitialSyncDone(): void {
    if (this.initialSyncDone) return;
    this.initialSyncDone = true;
    for (const entry of this.peersByName.values()) {
      entry.rib.markInitialSyncDone();
      if (entry.rib.hasPending()) entry.session.kickTx();
    }
  }

  private setGracefulShutdown(on: boolean): void {
    this.gracefulShutdown = on;
    for (const entry of this.peersByName.values()) {
      const n = entry.session.negotiated;
      if (!entry.rib.active || n === undefined) {
        if (!entry.rib.active) entry.packing.afterChange(); // the next session's context changed
        continue;
      }
      entry.rib.setExportPeer(this.exportPeer(entry, n));
      if (entry.rib.hasPending()) entry.session.kickTx();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimer(resolve, ms));
  }

  /**
   * RFC 8326 drain: re-announce every route with GRACEFUL_SHUTDOWN (65535:0; LOCAL_PREF 0 toward iBGP), wait
   * `waitTimeSec` so peers move traffic away, then withdraw everything. Routes set meanwhile are kept for undrain().
   * A wait of 0 withdraws before drain() returns (nothing set afterwards is sent).
   */
  async drain(opts: { waitTimeSec: number }): Promise<void> {
    this.setGracefulShutdown(true);
    if (opts.waitTimeSec > 0) await this.sleep(opts.waitTimeSec * 1000);
    if (!this.gracefulShutdown || this.drained) return; // undrain() came first, or a departure withdrew already
    this.withdrawAll();
  }

  private withdrawAll(): void {
    this.drained = true;
    for (const entry of this.peersByName.values()) {
      entry.rib.withhold(true);
      this.kick(entry);
    }
    this.emit('drained', {});
  }

  /**
   * Resolves once every Established session has pulled all its pending UPDATEs (they are in its socket, ahead of
   * any NOTIFICATION written later), or after `timeoutMs` of clock time.
   */
  private async untilSent(timeoutMs: number): Promise<void> {
    const deadline = this.clock.now() + timeoutMs;
    const pending = (): boolean => [...this.peersByName.values()].some((e) => e.rib.active && e.session.state === 'Established' && e.rib.hasPending());
    while (pending() && this.clock.now() < deadline) await this.sleep(SEND_POLL_MS);
  }

  /** Ends a drain: normal attributes again, and every desired route re-announced. */
  undrain(): void {
    const wasDrained = this.drained;
    this.drained = false;
    this.setGracefulShutdown(false);
    if (!wasDrained) return;
    for (const entry of this.peersByName.values()) {
      entry.rib.withhold(false);
      this.kick(entry);
    }
  }

  /** True between drain() and undrain(). */
  get draining(): boolean {
    return this.gracefulShutdown || this.drained;
  }

  /**
   * Stops the Speaker in `mode` (bgp/stop-modes.ts, docs/decisions.md "Stop modes") and closes the listener.
   * - `restart`: the BFD sessions AdminDown first (RFC 5882 §3.2), then every session ends so that its peer keeps
   *   our routes where graceful restart was negotiated (Cease 6/4 with N, no NOTIFICATION without N), Cease 6/2 with
   *   `message` elsewhere. Nothing is withdrawn.
   * - `departure`: unless drain() already withdrew, 65535:0 (LOCAL_PREF 0 toward iBGP), `waitTimeSec` (default 5)
   *   of clock time, the withdrawal of every route, up to `sendTimeoutMs` (default 5000) for the withdrawals to be
   *   handed to the sockets; then BFD AdminDown, then Cease 6/2 with `message`, inside a Hard Reset where N was
   *   negotiated.
   * Resolves with how each peer's session ended, once every socket is closed. A second call returns the first
   * call's outcome.
   */
  stop(opts: { mode: StopMode; message?: string; waitTimeSec?: number; sendTimeoutMs?: number }): Promise<StopOutcome> {
    this.stopping ??= this.stopOnce(opts);
    return this.stopping;
  }

  private async stopOnce(opts: { mode: StopMode; message?: string; waitTimeSec?: number; sendTimeoutMs?: number }): Promise<StopOutcome> {
    if (opts.mode === 'departure') {
      if (!this.drained) {
        this.setGracefulShutdown(true);
        await this.sleep(Math.max(0, opts.waitTimeSec ?? 5) * 1000);
        if (!this.drained) this.withdrawAll();
      }
      await this.untilSent(opts.sendTimeoutMs ?? 5000);
    }
    this.closed = true;
    // BFD AdminDown before any session ends: the peers' BFD must not take our going away for a path failure
    // (RFC 5882 §3.2); on a departure it follows the withdrawals.
    await this.bfd.adminDown();
    const peers: { peer: string; ending: PeerEnding }[] = [];
    const stops: Promise<void>[] = [];
    for (const entry of this.peersByName.values()) {
      const s = entry.session;
      const { ending, request } = peerEnding(opts.mode, s.state === 'Established', s.negotiated?.gracefulRestartMode ?? 'none', opts.message);
      peers.push({ peer: entry.cfg.name, ending });
      entry.rib.reset();
      stops.push(s.stop(request).catch(() => undefined));
    }
    await Promise.all(stops);
    await this.listener?.close();
    await this.bfd.close();
    return { mode: opts.mode, peers };
  }

  /**
   * Sets the BFD sessions of the named peers (default: all) AdminDown (RFC 5880 §6.8.16) and resolves once every
   * peer whose session was Up has confirmed it, or after `timeoutMs` (default 1000). A peer seeing AdminDown does
   * not treat it as a path failure (RFC 5882 §3.2), so BGP can then be closed for a restart that keeps forwarding.
   */
  bfdAdminDown(opts: { peers?: readonly string[]; timeoutMs?: number } = {}): Promise<void> {
    return this.bfd.adminDown(opts.peers, opts.timeoutMs);
  }

  /** Ends bfdAdminDown() for the named peers (default: all): the sessions start over from Down. */
  bfdAdminUp(peers?: readonly string[]): Promise<void> {
    return this.bfd.adminUp(peers);
  }

  /** A peer's BFD session changed state; Up → Down not caused by AdminDown resets BGP (RFC 5882 §10.2, RFC 9384). */
  private bfdStateChanged(ev: BfdStateEvent): void {
    this.emit('bfdState', ev);
    const entry = this.peersByName.get(ev.peer);
    if (!ev.failure || entry === undefined || this.closed) return;
    const s = entry.session.state;
    if (s === 'Established' || s === 'OpenSent' || s === 'OpenConfirm') entry.session.reset({ subcode: CeaseSubcode.BfdDown });
  }

  /**
   * Resets a peer. `soft: true`: outbound soft reset, the whole Adj-RIB-Out is sent again (session stays up).
   * `soft: false`: Cease 4 Administrative Reset (inside a Hard Reset where N was negotiated: the operator asked for
   * a hard reset, RFC 8538 §5) and reconnect. Throws Error for an unknown peer.
   */
  resetPeer(name: string, opts: { soft: boolean }): void {
    const entry = this.mustGet(name);
    if (opts.soft) {
      for (const f of DEFAULT_FAMILIES) entry.rib.refresh(f);
      if (entry.rib.hasPending()) entry.session.kickTx();
      return;
    }
    entry.session.reset({ subcode: CeaseSubcode.AdministrativeReset, hardReset: true });
  }

  /** Per-peer status (admin API, metrics). */
  peers(): PeerStatus[] {
    const now = this.clock.now();
    return [...this.peersByName.values()].map((entry) =>
      peerStatus(entry, { localAs: this.localAs, bgpIdentifier: this.bgpIdentifier, now, gracefulShutdown: this.gracefulShutdown, bfd: entry.cfg.bfd !== undefined ? { status: this.bfd.status(entry.cfg.name) } : undefined }),
    );
  }

  /** The routes a peer holds from us, with the attributes we sent it. Throws Error for an unknown peer. */
  adjRibOut(peerName: string): ExportedRoute[] {
    return this.mustGet(peerName).rib.advertisedRoutes();
  }

  private emitError(err: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  private mustGet(name: string): PeerEntry {
    const e = this.peersByName.get(name);
    if (e === undefined) throw new Error(`unknown peer ${JSON.stringify(name)}`);
    return e;
  }
}
