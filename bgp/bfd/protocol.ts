/**
 * The typed message channel between the main-thread BFD handle (bgp/bfd/handle.ts) and the engine it owns, which
 * runs in a worker thread (bgp/bfd/worker.ts): configuration goes in as requests answered by a reply with the same
 * `seq`; state and timer changes come out as notices. Every message is plain structured-clone data.
 */
import type { BfdDiscards, BfdEngine, BfdPeerConfig, BfdSessionInfo } from './engine.ts';
import type { BfdSessionChange } from './session.ts';

/** Main thread → engine. */
export type BfdRequest =
  | { readonly type: 'add'; readonly seq: number; readonly id: string; readonly config: BfdPeerConfig }
  | { readonly type: 'update'; readonly seq: number; readonly id: string; readonly config: BfdPeerConfig }
  | { readonly type: 'remove'; readonly seq: number; readonly id: string }
  | { readonly type: 'adminDown'; readonly seq: number; readonly ids?: readonly string[]; readonly timeoutMs?: number }
  | { readonly type: 'adminUp'; readonly seq: number; readonly ids?: readonly string[] }
  | { readonly type: 'status'; readonly seq: number }
  | { readonly type: 'close'; readonly seq: number };

/** The answer to `status`. */
export interface BfdStatusReply {
  readonly sessions: Readonly<Record<string, BfdSessionInfo>>;
  readonly discards: BfdDiscards;
}

/** Engine → main thread. */
export type BfdMessage =
  | { readonly type: 'reply'; readonly seq: number; readonly ok: true; readonly status?: BfdStatusReply }
  | { readonly type: 'reply'; readonly seq: number; readonly ok: false; readonly error: string }
  | { readonly type: 'update'; readonly id: string; readonly change: BfdSessionChange; readonly info: BfdSessionInfo }
  | { readonly type: 'error'; readonly id?: string; readonly message: string };

/** The two ends of a channel (a worker's parentPort, a Worker, a MessagePort). */
export interface MessageEnd<In, Out> {
  postMessage(message: Out): void;
  on(event: 'message', listener: (message: In) => void): unknown;
}

/**
 * Answers requests arriving on `port` with `engine` (built by `make` with the notice callbacks). Used by the worker
 * and, for tests, on the main thread.
 */
export function serveEngine(port: MessageEnd<BfdRequest, BfdMessage>, make: (notify: (m: BfdMessage) => void) => BfdEngine): BfdEngine {
  const notify = (m: BfdMessage): void => port.postMessage(m);
  const engine = make(notify);
  port.on('message', (req) => {
    void handle(engine, req).then(
      (status) => notify(status ? { type: 'reply', seq: req.seq, ok: true, status } : { type: 'reply', seq: req.seq, ok: true }),
      (err: unknown) => notify({ type: 'reply', seq: req.seq, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  return engine;
}

async function handle(engine: BfdEngine, req: BfdRequest): Promise<BfdStatusReply | undefined> {
  switch (req.type) {
    case 'add':
      await engine.add(req.id, req.config);
      return undefined;
    case 'update':
      await engine.update(req.id, req.config);
      return undefined;
    case 'remove':
      await engine.remove(req.id);
      return undefined;
    case 'adminDown':
      await engine.adminDown(req.ids, req.timeoutMs);
      return undefined;
    case 'adminUp':
      engine.adminUp(req.ids);
      return undefined;
    case 'status':
      return { sessions: engine.all(), discards: { ...engine.discards } };
    case 'close':
      await engine.close();
      return undefined;
  }
}
