/**
 * The speaker thread's side of the channel (bgp/speaker-thread/protocol.ts): applies the proxy's calls to the
 * Speaker it serves, and sends back replies, the Speaker's events and its view. Outgoing messages of one event-loop
 * turn leave together in one postMessage (an UPDATE burst emits one `updateSent` per UPDATE).
 *
 * Views are sent after every call and every state change (next turn), after UPDATEs at most every
 * VIEW_AFTER_UPDATES_MS (prefix counters), and every VIEW_INTERVAL_MS anyway (uptime, message counters).
 */
import type { Speaker } from '../speaker.ts';
import { answer, errorData } from '../worker-rpc.ts';
import type { ChannelEnd } from '../worker-rpc.ts';
import type { CallHandlers, CallMessage, EventMessage, SpeakerEvents, ThreadMessage } from './protocol.ts';
import { MemoryReducer } from '../memory.ts';
import { encodeRouteBatch, stageRemovals, stageRouteBatch, wireExportedRoute } from './route-batch.ts';

/** A view at least this often (ms). */
export const VIEW_INTERVAL_MS = 1000;
/** After UPDATEs, a view at most this often (ms). */
const VIEW_AFTER_UPDATES_MS = 100;

/**
 * The Speaker's handler of each call. Route sets replaced or dropped are noted in `memory`: after a big change this
 * thread gives the dead table's memory back once it is quiet (bgp/memory.ts).
 */
function handlers(speaker: Speaker, memory: MemoryReducer): CallHandlers {
  let lastSetCount = 0;
  return {
    ready: () => speaker.ready(),
    listen: () => speaker.listen(),
    addPeer: (cfg) => speaker.addPeer(cfg),
    updatePeer: (cfg) => speaker.updatePeer(cfg),
    removePeer: (name) => speaker.removePeer(name),
    setRoutes: (batch) => {
      speaker.applyRoutes((edit) => stageRouteBatch(batch, edit), { replace: true });
      memory.note(lastSetCount + batch.count);
      lastSetCount = batch.count;
    },
    updateRoutes: (changed, removed) => {
      let removals = 0;
      speaker.applyRoutes(
        (edit) => {
          stageRouteBatch(changed, edit);
          stageRemovals(removed, edit);
          removals = edit.removals;
        },
        { replace: false },
      );
      memory.note(changed.count + removals);
    },
    markInitialSyncDone: () => speaker.markInitialSyncDone(),
    drain: (opts) => speaker.drain(opts),
    undrain: () => speaker.undrain(),
    stop: async (opts) => ({ kind: 'stopped', outcome: await speaker.stop(opts) }),
    resetPeer: (name, opts) => speaker.resetPeer(name, opts),
    bfdAdminDown: (opts) => speaker.bfdAdminDown(opts),
    bfdAdminUp: (peers) => speaker.bfdAdminUp(peers),
    adjRibOut: (peer) => ({ kind: 'exported', routes: speaker.adjRibOut(peer).map(wireExportedRoute) }),
    routes: () => {
      const routes = speaker.routes();
      return { kind: 'routes', routes: encodeRouteBatch(routes, routes.length).batch };
    },
  };
}

/** Serves `speaker` on `port` until `stop()`. */
export function serveSpeaker(port: ChannelEnd<CallMessage, ThreadMessage[]>, speaker: Speaker): { stop(): void } {
  const memory = new MemoryReducer();
  const calls = handlers(speaker, memory);
  let outbox: ThreadMessage[] = [];
  let transfer: ArrayBuffer[] = [];
  let flushing = false;
  let seq = 0;
  let viewDue = false;
  let lastView = 0;
  let viewTimer: NodeJS.Timeout | undefined;

  const post = (m: ThreadMessage, buffers?: readonly ArrayBuffer[]): void => {
    outbox.push(m);
    if (buffers) transfer.push(...buffers);
    if (flushing) return;
    flushing = true;
    setImmediate(flush);
  };
  const flush = (): void => {
    flushing = false;
    if (viewDue) {
      viewDue = false;
      lastView = Date.now();
      outbox.push({ type: 'view', view: { seq, peers: speaker.peers(), draining: speaker.draining } });
    }
    const batch = outbox;
    const buffers = transfer;
    outbox = [];
    transfer = [];
    if (batch.length > 0) port.postMessage(batch, buffers);
  };
  const view = (): void => {
    viewDue = true;
    if (!flushing) {
      flushing = true;
      setImmediate(flush);
    }
  };
  const viewSoon = (): void => {
    if (viewDue || viewTimer !== undefined) return;
    const wait = lastView + VIEW_AFTER_UPDATES_MS - Date.now();
    if (wait <= 0) return view();
    viewTimer = setTimeout(() => {
      viewTimer = undefined;
      view();
    }, wait);
  };

  const event = (m: EventMessage): void => {
    post(m);
    if (m.event === 'updateSent') viewSoon();
    else if (m.event !== 'error') view();
  };
  speaker.on('peerState', (payload: SpeakerEvents['peerState']) => event({ type: 'event', event: 'peerState', payload }));
  speaker.on('updateSent', (payload: SpeakerEvents['updateSent']) => event({ type: 'event', event: 'updateSent', payload }));
  speaker.on('endOfRib', (payload: SpeakerEvents['endOfRib']) => event({ type: 'event', event: 'endOfRib', payload }));
  speaker.on('routeRefresh', (payload: SpeakerEvents['routeRefresh']) => event({ type: 'event', event: 'routeRefresh', payload }));
  speaker.on('drained', (payload: SpeakerEvents['drained']) => event({ type: 'event', event: 'drained', payload }));
  speaker.on('bfdState', (payload: SpeakerEvents['bfdState']) => event({ type: 'event', event: 'bfdState', payload }));
  speaker.on('unsentRoutes', (payload: SpeakerEvents['unsentRoutes']) => event({ type: 'event', event: 'unsentRoutes', payload }));
  speaker.on('error', (err: unknown) => event({ type: 'event', event: 'error', payload: errorData(err) }));

  port.on('message', (m: CallMessage) => {
    seq = m.seq;
    answer(calls, m, (r) => post(r, r.ok && r.result?.kind === 'routes' ? [r.result.routes.flags.buffer, r.result.routes.numbers.buffer] : undefined));
    view();
  });

  const interval = setInterval(view, VIEW_INTERVAL_MS);
  interval.unref();
  return {
    stop: () => {
      clearInterval(interval);
      clearTimeout(viewTimer);
      memory.stop();
    },
  };
}
