/**
 * Entry point of the BFD worker thread (started by bgp/bfd/handle.ts): a BfdEngine on real UDP sockets and a
 * monotonic clock, answering the typed calls of bgp/bfd/protocol.ts on `parentPort`. Nothing else runs on this
 * thread, so a garbage-collection pause, an UPDATE burst or a slow reconcile on the main thread never delays a BFD
 * packet or a Detection Time.
 */
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { realClock } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { BfdEngine } from './engine.ts';
import { serveEngine } from './protocol.ts';
import type { BfdMessage, BfdRequest } from './protocol.ts';
import type { ChannelEnd } from '../worker-rpc.ts';
import { udpTransport } from './udp.ts';

/** realClock's timers with a monotonic now() (a wall-clock step must not shorten a gap). */
const monotonicClock: Clock = { now: () => performance.now(), setTimer: realClock.setTimer, clearTimer: realClock.clearTimer };

if (parentPort) {
  const port: ChannelEnd<BfdRequest, BfdMessage> = parentPort;
  serveEngine(port, (notify) =>
    new BfdEngine({
      clock: monotonicClock,
      transport: udpTransport,
      onUpdate: (id, change, info) => notify({ type: 'update', id, change, info }),
      onError: (id, message) => notify(id !== undefined ? { type: 'error', id, message } : { type: 'error', message }),
    }),
  );
}
