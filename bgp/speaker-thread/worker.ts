/**
 * Entry point of the speaker thread (started by bgp/speaker-thread/proxy.ts): one Speaker (sessions, keepalives,
 * hold timers, the UPDATE pump, Adj-RIB-Out; BFD in its own nested worker, bgp/bfd/handle.ts) on real sockets,
 * served on `parentPort` with the typed channel of protocol.ts. Nothing of the control plane runs on this thread, so
 * a busy or blocked main thread never delays a KEEPALIVE or lets a hold timer expire.
 */
import { parentPort } from 'node:worker_threads';
import { Speaker } from '../speaker.ts';
import { serveSpeaker } from './host.ts';
import type { SpeakerThreadOptions } from './protocol.ts';

// The Speaker's options are the thread's first message (thread.ts `serve`): the thread loads its modules before
// they are known. Every later message is a call batch, for serveSpeaker.
const port = parentPort;
port?.once('message', (options: SpeakerThreadOptions) => serveSpeaker(port, new Speaker(options)));
