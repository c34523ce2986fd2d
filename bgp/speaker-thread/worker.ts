/**
 * Entry point of the speaker thread (started by bgp/speaker-thread/proxy.ts): one Speaker (sessions, keepalives,
 * hold timers, the UPDATE pump, Adj-RIB-Out; BFD in its own nested worker, bgp/bfd/handle.ts) on real sockets,
 * served on `parentPort` with the typed channel of protocol.ts. Nothing of the control plane runs on this thread, so
 * a busy or blocked main thread never delays a KEEPALIVE or lets a hold timer expire.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Speaker } from '../speaker.ts';
import { serveSpeaker } from './host.ts';
import type { SpeakerThreadOptions } from './protocol.ts';

if (parentPort) {
  const options: SpeakerThreadOptions = workerData;
  serveSpeaker(parentPort, new Speaker(options));
}
