/**
 * SpeakerProxy: the Speaker's public API on the main thread, for a Speaker that runs in its own worker thread
 * (bgp/speaker-thread/worker.ts), over the typed channel of protocol.ts. `SpeakerProxy.start(options)` starts it.
 *
 * - Commands (addPeer, setRoutes, drain, ...) are posted at once and return at once (void) or with a Promise of the
 *   speaker thread's answer. A fire-and-forget command that fails there (an unknown peer, a RouteError: the Speaker
 *   applies nothing of a batch with a malformed route) is reported as an `error` event, with the Error rebuilt
 *   (name, message, code, syscall; a RouteError is a RouteError again).
 * - Routes cross as RouteBatches (route-batch.ts): each distinct attribute set once, the prefixes as one string.
 * - `peers()` and `draining` are served from the last view the thread pushed (at least every second, and after every
 *   call and state change), with the calls not yet applied there laid over it (a peer just added is listed, a peer
 *   just removed is not, drain() is draining at once) and uptimes advanced to now. `adjRibOut()` and `routes()`
 *   answer with Promises.
 * - Events are the Speaker's (`peerState`, `updateSent`, `endOfRib`, `routeRefresh`, `drained`, `bfdState`,
 *   `unsentRoutes`, `error`), plus `threadExit` ({ message }) when the speaker thread dies.
 *
 * A dying speaker thread (an uncaught exception, out of memory) takes its sessions with it: their TCP connections
 * close, and peers with graceful restart keep our routes as stale for the restart time (RFC 4724 §4.2). The proxy
 * does not start a new thread: it reports the death (`threadExit`, an `error` with code ERR_SPEAKER_THREAD_EXIT,
 * `failure`; peers() shows every session Idle with the cause), rejects what was pending and ignores later commands.
 * `herald run` then stops the process, and the restart comes up as a graceful restart (docs/architecture.md).
 */
import { EventEmitter } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { BGP_PORT } from '../constants.ts';
import type { ExportedRoute } from '../rib/export.ts';
import { RouteError } from '../rib/route.ts';
import type { Route } from '../rib/route.ts';
import type { PeerConfig, PeerStatus } from '../speaker.ts';
import type { CallMessage, CallResult, SpeakerCalls, SpeakerThreadOptions, SpeakerView, StopOptions, ThreadMessage } from './protocol.ts';
import type { StopOutcome } from '../stop-modes.ts';
import { PendingCalls, rebuildError } from '../worker-rpc.ts';
import type { ErrorData } from '../worker-rpc.ts';
import { decodeRouteBatch, encodePrefixes, encodeRouteBatch, exportedRoute } from './route-batch.ts';
import { SpeakerThread } from './thread.ts';

/** Code of the `error` reported when the speaker thread dies. */
export const SPEAKER_THREAD_EXIT = 'ERR_SPEAKER_THREAD_EXIT';

/** What the proxy needs of the thread: a Worker, or (tests) one end of a MessageChannel served in-process. */
interface ThreadLink {
  post<K extends keyof SpeakerCalls>(m: CallMessage<K>, transfer: readonly ArrayBuffer[]): void;
  /** Ends the thread; resolves once it is gone. */
  end(): Promise<void>;
}

/** A call applied locally to the view until the thread's view includes it. */
interface Overlay {
  readonly seq: number;
  readonly apply: (v: SpeakerView) => SpeakerView;
}

/** See the module comment. */
export class SpeakerProxy extends EventEmitter {
  readonly localAs: number;
  readonly bgpIdentifier: string;
  #link: ThreadLink | undefined;
  readonly #calls = new PendingCalls<SpeakerCalls, CallResult>(rebuild);
  #view: SpeakerView = { seq: 0, peers: [], draining: false };
  #viewAt = Date.now();
  #overlays: Overlay[] = [];
  #failure: string | undefined;
  #closing: Promise<StopOutcome> | undefined;

  private constructor(options: SpeakerThreadOptions) {
    super();
    this.localAs = options.localAs;
    this.bgpIdentifier = options.bgpIdentifier;
  }

  /**
   * Starts a Speaker with `options` on `thread` (a speaker thread spawned ahead, thread.ts; by default a new one).
   * Bad options (an invalid localAs) make the thread throw: reported as its death too (see the module comment).
   * @throws Error when `thread` serves a Speaker already.
   */
  static start(options: SpeakerThreadOptions, thread: SpeakerThread = SpeakerThread.spawn()): SpeakerProxy {
    const proxy = new SpeakerProxy(options);
    thread.serve(options, { message: (batch) => proxy.#receive(batch), exited: (cause) => proxy.#exited(cause) });
    proxy.#link = {
      post: (m, transfer) => thread.post(m, transfer),
      end: () => thread.end(),
    };
    return proxy;
  }

  /** A proxy over one end of a MessageChannel whose other end is served in-process (bgp/speaker-thread/host.ts; tests). */
  static overPort(options: SpeakerThreadOptions, port: MessagePort, end: () => Promise<void>): SpeakerProxy {
    const proxy = new SpeakerProxy(options);
    port.on('message', (batch: ThreadMessage[]) => proxy.#receive(batch));
    proxy.#link = {
      post: (m, transfer) => port.postMessage(m, transfer),
      end: async () => {
        await end();
        port.close();
      },
    };
    return proxy;
  }

  /** Why the speaker thread died, once it has (undefined while it runs). */
  get failure(): string | undefined {
    return this.#failure;
  }

  ready(): Promise<void> {
    return this.#call('ready', []).then(() => undefined);
  }

  /** Binds the listener (see Speaker.listen: the first bind with `deferListen`, or a retry). */
  listen(): Promise<void> {
    return this.#call('listen', []).then(() => undefined);
  }

  addPeer(cfg: PeerConfig): void {
    const seq = this.#send('addPeer', [cfg]);
    this.#overlay(seq, (v) => (v.peers.some((p) => p.name === cfg.name) ? v : { ...v, peers: [...v.peers, newPeerStatus(cfg, this.localAs, this.bgpIdentifier)] }));
  }

  updatePeer(cfg: PeerConfig): void {
    const seq = this.#send('updatePeer', [cfg]);
    this.#overlay(seq, (v) => ({ ...v, peers: v.peers.map((p) => (p.name === cfg.name ? { ...p, address: cfg.address, port: cfg.port ?? BGP_PORT, peerAs: cfg.peerAs } : p)) }));
  }

  removePeer(name: string): Promise<void> {
    const done = this.#call('removePeer', [name]).then(() => undefined);
    this.#overlay(this.#calls.lastSeq, (v) => ({ ...v, peers: v.peers.filter((p) => p.name !== name) }));
    return done;
  }

  /** Replaces the whole desired set (see Speaker.setRoutes; a RouteError arrives as an `error` event). */
  setRoutes(routes: readonly Route[] | ReadonlyMap<string, Route>): void {
    const { batch, transfer } = encodeRouteBatch(routes.values(), 'size' in routes ? routes.size : routes.length);
    this.#send('setRoutes', [batch], transfer);
  }

  /** Upserts `changed` and removes the `removed` prefixes (see Speaker.updateRoutes). */
  updateRoutes(changed: Iterable<Route>, removed: Iterable<string> = []): void {
    const list: readonly Route[] = Array.isArray(changed) ? changed : [...changed];
    const { batch, transfer } = encodeRouteBatch(list, list.length);
    this.#send('updateRoutes', [batch, encodePrefixes(removed)], transfer);
  }

  markInitialSyncDone(): void {
    this.#send('markInitialSyncDone', []);
  }

  drain(opts: { waitTimeSec: number }): Promise<void> {
    const done = this.#call('drain', [opts]).then(() => undefined);
    this.#overlay(this.#calls.lastSeq, (v) => ({ ...v, draining: true }));
    return done;
  }

  undrain(): void {
    const seq = this.#send('undrain', []);
    this.#overlay(seq, (v) => ({ ...v, draining: false }));
  }

  /** True between drain() and undrain(). */
  get draining(): boolean {
    return this.#current().draining;
  }

  /**
   * Stops every session in `opts.mode` (see Speaker.stop), then the speaker thread; resolves with how each session
   * ended (no peers when the thread had died). Idempotent: a second call returns the first one's outcome.
   */
  stop(opts: StopOptions): Promise<StopOutcome> {
    this.#closing ??= this.#call('stop', [opts])
      .then((r): StopOutcome => (r?.kind === 'stopped' ? r.outcome : { mode: opts.mode, peers: [] }))
      .catch((): StopOutcome => ({ mode: opts.mode, peers: [] }))
      .then(async (outcome) => {
        await this.#end();
        return outcome;
      });
    return this.#closing;
  }

  resetPeer(name: string, opts: { soft: boolean }): void {
    this.#send('resetPeer', [name, opts]);
  }

  bfdAdminDown(opts: { peers?: readonly string[]; timeoutMs?: number } = {}): Promise<void> {
    return this.#call('bfdAdminDown', [opts]).then(() => undefined);
  }

  bfdAdminUp(peers?: readonly string[]): Promise<void> {
    return this.#call('bfdAdminUp', [peers]).then(() => undefined);
  }

  /** Status of every peer, from the last view (see the module comment). */
  peers(): PeerStatus[] {
    const elapsedSec = (Date.now() - this.#viewAt) / 1000;
    return this.#current().peers.map((p) => (p.uptimeSec === undefined ? p : { ...p, uptimeSec: p.uptimeSec + elapsedSec }));
  }

  /** The routes a peer holds from us. Rejects for an unknown peer. */
  async adjRibOut(peer: string): Promise<ExportedRoute[]> {
    const r = await this.#call('adjRibOut', [peer]);
    if (r?.kind !== 'exported') throw new Error('speaker thread: adjRibOut answered without routes');
    return r.routes.map(exportedRoute);
  }

  /** The desired routes currently set in the speaker thread. */
  async routes(): Promise<Route[]> {
    const r = await this.#call('routes', []);
    if (r?.kind !== 'routes') throw new Error('speaker thread: routes answered without routes');
    return decodeRouteBatch(r.routes);
  }

  /** Why no call can be posted now (the thread is gone or stopped), or undefined. */
  #refused(): Error | undefined {
    return this.#link === undefined || this.#failure !== undefined ? this.#failedError() : undefined;
  }

  #postTo<K extends keyof SpeakerCalls>(transfer: readonly ArrayBuffer[]): (m: CallMessage<K>) => void {
    return (m) => this.#link?.post(m, transfer);
  }

  /** Posts a command whose failure is reported as an `error` event; returns its seq. */
  #send<K extends keyof SpeakerCalls>(method: K, args: SpeakerCalls[K], transfer: readonly ArrayBuffer[] = []): number {
    return this.#calls.send(method, args, this.#postTo(transfer), (e) => this.#emitError(e), this.#refused());
  }

  /** Posts a call and resolves with its result; rejects with the speaker thread's error. */
  #call<K extends keyof SpeakerCalls>(method: K, args: SpeakerCalls[K]): Promise<CallResult | undefined> {
    return this.#calls.call(method, args, this.#postTo([]), this.#refused());
  }

  #overlay(seq: number, apply: (v: SpeakerView) => SpeakerView): void {
    if (this.#failure === undefined) this.#overlays.push({ seq, apply });
  }

  #current(): SpeakerView {
    let v = this.#view;
    for (const o of this.#overlays) v = o.apply(v);
    return v;
  }

  #receive(batch: readonly ThreadMessage[]): void {
    for (const m of batch) {
      switch (m.type) {
        case 'reply':
          this.#calls.settle(m);
          break;
        case 'view':
          this.#view = m.view;
          this.#viewAt = Date.now();
          this.#overlays = this.#overlays.filter((o) => o.seq > m.view.seq);
          break;
        case 'event':
          if (m.event === 'error') this.#emitError(rebuild(m.payload));
          else this.emit(m.event, m.payload);
          break;
      }
    }
  }

  #exited(cause: string): void {
    this.#link = undefined;
    if (this.#closing !== undefined) return;
    this.#failure = `speaker thread exited (${cause}): its BGP sessions are closed`;
    const err = this.#failedError();
    this.#calls.failAll(err);
    const reason = { kind: 'transportError', message: this.#failure } as const;
    this.#view = { ...this.#current(), peers: this.#current().peers.map((p) => ({ ...p, state: 'Idle', uptimeSec: undefined, negotiated: undefined, lastReason: reason })) };
    this.#overlays = [];
    this.emit('threadExit', { message: this.#failure });
    this.#emitError(err);
  }

  async #end(): Promise<void> {
    const link = this.#link;
    this.#link = undefined;
    await link?.end();
  }

  #failedError(): Error {
    const err: NodeJS.ErrnoException = new Error(this.#failure ?? 'the speaker is shut down');
    err.code = SPEAKER_THREAD_EXIT;
    return err;
  }

  #emitError(err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }
}

/** The status of a peer just added, until the speaker thread's view has it (the Speaker's AS and Identifier unless the peer sets its own). */
function newPeerStatus(cfg: PeerConfig, localAs: number, bgpIdentifier: string): PeerStatus {
  return {
    name: cfg.name,
    address: cfg.address,
    port: cfg.port ?? BGP_PORT,
    peerAs: cfg.peerAs,
    localAs: cfg.localAs ?? localAs,
    bgpIdentifier: cfg.bgpIdentifier ?? bgpIdentifier,
    state: 'Idle',
    uptimeSec: undefined,
    negotiated: undefined,
    lastReason: undefined,
    lastNotificationSent: undefined,
    lastNotificationReceived: undefined,
    messagesSent: {},
    messagesReceived: {},
    prefixesAdvertised: 0,
    prefixesReceived: 0,
    endOfRibReceived: [],
    endOfRibSent: [],
    gracefulShutdown: false,
  };
}

/** The Error of its channel form (a RouteError is a RouteError again). */
function rebuild(d: ErrorData): Error {
  return rebuildError(d, (x) => (x.name === 'RouteError' ? new RouteError(x.message) : undefined));
}
