/**
 * The typed message channel between the main-thread BFD handle (bgp/bfd/handle.ts) and the engine it owns, which
 * runs in a worker thread (bgp/bfd/worker.ts): configuration goes in as calls (bgp/worker-rpc.ts, as for the speaker
 * thread) answered by a reply with the same `seq`; state and timer changes come out as notices. Every message is
 * plain structured-clone data.
 */
import { answer } from '../worker-rpc.ts';
import type { CallHandlers, CallMessage, ChannelEnd, ReplyMessage } from '../worker-rpc.ts';
import type { BfdChange, BfdDiscards, BfdEngine, BfdPeerConfig, BfdSessionInfo } from './engine.ts';

/** The engine's methods the handle calls, each with its arguments. */
export interface BfdCalls {
  add: [id: string, config: BfdPeerConfig];
  update: [id: string, config: BfdPeerConfig];
  remove: [id: string];
  adminDown: [ids: readonly string[] | undefined, timeoutMs: number | undefined];
  adminUp: [ids: readonly string[] | undefined];
  status: [];
  close: [];
}

/** The answer to `status`. */
export interface BfdStatusReply {
  readonly sessions: Readonly<Record<string, BfdSessionInfo>>;
  readonly discards: BfdDiscards;
}

/** Main thread → engine. */
export type BfdRequest = CallMessage<BfdCalls>;

/** Engine → main thread: replies, and the notices of the sessions. */
export type BfdMessage =
  | ReplyMessage<BfdStatusReply>
  | { readonly type: 'update'; readonly id: string; readonly change: BfdChange; readonly info: BfdSessionInfo }
  | { readonly type: 'error'; readonly id?: string; readonly message: string };

/** The engine's handler of each call. */
function handlers(engine: BfdEngine): CallHandlers<BfdCalls, BfdStatusReply> {
  return {
    add: (id, config) => engine.add(id, config),
    update: (id, config) => engine.update(id, config),
    remove: (id) => engine.remove(id),
    adminDown: (ids, timeoutMs) => engine.adminDown(ids, timeoutMs),
    adminUp: (ids) => engine.adminUp(ids),
    status: () => ({ sessions: engine.all(), discards: { ...engine.discards } }),
    close: () => engine.close(),
  };
}

/**
 * Answers calls arriving on `port` with `engine` (built by `make` with the notice callbacks). Used by the worker
 * and, for tests, on the main thread.
 */
export function serveEngine(port: ChannelEnd<BfdRequest, BfdMessage>, make: (notify: (m: BfdMessage) => void) => BfdEngine): BfdEngine {
  const notify = (m: BfdMessage): void => port.postMessage(m);
  const engine = make(notify);
  const calls = handlers(engine);
  port.on('message', (m) => answer(calls, m, notify));
  return engine;
}
