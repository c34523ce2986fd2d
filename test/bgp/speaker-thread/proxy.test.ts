// SpeakerProxy with its Speaker in a real worker thread (bgp/speaker-thread/), over loopback sockets to a scripted
// raw peer: commands, events, views and queries cross the channel; failures come back as errors with their names and
// codes; a dying speaker thread is reported and leaves nothing pending.
import t from 'tap';
import { SpeakerProxy, SPEAKER_THREAD_EXIT } from '../../../bgp/speaker-thread/proxy.ts';
import { SpeakerThread } from '../../../bgp/speaker-thread/thread.ts';
import { RouteError } from '../../../bgp/rib/route.ts';
import type { Route } from '../../../bgp/rib/route.ts';
import { linkBandwidth } from '../../../bgp/codec/ext-communities.ts';
import { capability, keepalive, open, param, u16, u32, u8 } from '../../helpers/wire.ts';
import { RawPeer, once, testAddresses } from '../session/raw-peer.ts';
import type { RawConn } from '../session/raw-peer.ts';
import { decodeUpdate } from '../rib/wire-decode.ts';

const T = { timeout: 60_000 };
const mp = (afi: number, safi: number) => capability(1, u16(afi), u8(0), u8(safi));
const peerOpen = () => open({ as: 65002, holdTime: 90, id: '10.0.0.2', params: [param(2, mp(1, 1), mp(2, 1), capability(2), capability(65, u32(65002)))] });

/** Answers our OPEN and KEEPALIVE on the peer's side. */
async function establish(conn: RawConn): Promise<void> {
  await conn.next(1);
  conn.send(peerOpen());
  await conn.next(4);
  conn.send(keepalive());
}

/** Reads UPDATEs until `want` prefixes were announced (and `gone` withdrawn); returns them. */
async function updatesUntil(conn: RawConn, pred: (announced: Set<string>, withdrawn: Set<string>) => boolean): Promise<{ announced: Set<string>; withdrawn: Set<string> }> {
  const announced = new Set<string>();
  const withdrawn = new Set<string>();
  while (!pred(announced, withdrawn)) {
    const m = await conn.next(2, 10_000);
    const u = decodeUpdate(m.raw);
    for (const p of u.announced) announced.add(p);
    for (const p of u.withdrawn) withdrawn.add(p);
  }
  return { announced, withdrawn };
}

async function until(what: string, pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('commands, events, views and queries cross the channel', T, async (t) => {
  const a = testAddresses();
  const peer = await RawPeer.listen(a.peer);
  const proxy = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1' });
  t.teardown(async () => {
    await proxy.stop({ mode: 'departure', waitTimeSec: 0 });
    await peer.close();
  });
  const errors: Error[] = [];
  proxy.on('error', (e: Error) => errors.push(e));
  const states: string[] = [];
  proxy.on('peerState', (e: { to: string }) => states.push(e.to));
  await proxy.ready();

  const r1: Route = { prefix: '192.0.2.1/32', family: 'ipv4-unicast', communities: [65001 * 65536 + 7], extendedCommunities: [linkBandwidth(65001, 1e6)] };
  const r2: Route = { prefix: '198.51.100.0/24', family: 'ipv4-unicast', med: 5 };
  proxy.setRoutes(new Map([[r1.prefix, r1], [r2.prefix, r2]]));
  proxy.markInitialSyncDone();
  proxy.addPeer({ name: 'p', address: a.peer, port: peer.port, peerAs: 65002, localAddress: a.ours, connectRetryTimeSec: 1, families: ['ipv4-unicast'] });
  t.same(proxy.peers().map((p) => [p.name, p.state, p.port]), [['p', 'Idle', peer.port]], 'a peer just added is listed before the thread says so');

  const conn = await peer.accept(10_000);
  await establish(conn);
  await once(proxy, 'peerState', (e: { to: string }) => e.to === 'Established', 10_000);
  const first = await updatesUntil(conn, (ann) => ann.size >= 2);
  t.same([...first.announced].sort(), ['ipv4-unicast 192.0.2.1/32', 'ipv4-unicast 198.51.100.0/24']);
  await until('a view with the peer Established and 2 prefixes', () => proxy.peers()[0]?.state === 'Established' && proxy.peers()[0]?.prefixesAdvertised === 2);
  const before = proxy.peers()[0]!.uptimeSec!;
  await new Promise((r) => setTimeout(r, 50));
  t.ok(proxy.peers()[0]!.uptimeSec! > before, 'uptime advances between views');

  // incremental change
  const r3: Route = { prefix: '203.0.113.0/24', family: 'ipv4-unicast', asPathPrepend: 2 };
  proxy.updateRoutes([r3], [r2.prefix]);
  const next = await updatesUntil(conn, (ann, wd) => ann.has('ipv4-unicast 203.0.113.0/24') && wd.has('ipv4-unicast 198.51.100.0/24'));
  t.ok(next.announced.has('ipv4-unicast 203.0.113.0/24'));

  // queries
  const exported = await proxy.adjRibOut('p');
  const e1 = exported.find((r) => r.prefix === r1.prefix);
  t.same(e1?.asPath, [65001]);
  t.equal(e1?.nextHop, a.ours);
  t.ok(Buffer.isBuffer(e1?.extendedCommunities?.[0]?.value), 'extended community values are Buffers again');
  t.same(exported.find((r) => r.prefix === r3.prefix)?.asPath, [65001, 65001, 65001], 'asPathPrepend crossed the channel: two extra copies toward the eBGP peer');
  t.same((await proxy.routes()).map((r) => r.prefix).sort(), [r1.prefix, r3.prefix]);
  await t.rejects(proxy.adjRibOut('nobody'), /unknown peer "nobody"/);

  // failures of fire-and-forget commands come back as 'error' events, rebuilt
  proxy.resetPeer('nobody', { soft: true });
  proxy.setRoutes([{ prefix: '10.0.0.1/8', family: 'ipv4-unicast' }]);
  await until('two errors', () => errors.length >= 2);
  t.match(errors[0]!.message, /unknown peer "nobody"/);
  t.ok(errors[1] instanceof RouteError, 'a RouteError is a RouteError again');
  t.match(errors[1]!.message, /host bits set in "10\.0\.0\.1\/8"/);
  t.same((await proxy.routes()).map((r) => r.prefix).sort(), [r1.prefix, r3.prefix], 'nothing of the bad batch was applied');

  // drain: draining at once, 'drained' once withdrawn; undrain
  const drained = once(proxy, 'drained', () => true, 10_000);
  void proxy.drain({ waitTimeSec: 0 });
  t.equal(proxy.draining, true, 'draining as soon as drain() is called');
  await drained;
  await updatesUntil(conn, (_ann, wd) => wd.has('ipv4-unicast 192.0.2.1/32'));
  proxy.undrain();
  t.equal(proxy.draining, false);
  await updatesUntil(conn, (ann) => ann.has('ipv4-unicast 192.0.2.1/32'));

  // removePeer: gone from the view at once; Cease 6/3 on the wire
  const removed = proxy.removePeer('p');
  t.same(proxy.peers(), [], 'a removed peer is not listed any more');
  await removed;
  const n = await conn.next(3);
  t.same([n.body[0], n.body[1]], [6, 3]);
  t.same(states.slice(0, 4), ['Connect', 'OpenSent', 'OpenConfirm', 'Established']);
  t.equal(errors.length, 2, 'no other error');
});

t.test('a listener that cannot bind: ready() rejects with the OS error and the error event names the listen call', T, async (t) => {
  const a = testAddresses();
  const holder = await RawPeer.listen(a.ours);
  const proxy = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1', listen: { address: a.ours, port: holder.port } });
  t.teardown(async () => {
    await proxy.stop({ mode: 'departure', waitTimeSec: 0 });
    await holder.close();
  });
  const errors: NodeJS.ErrnoException[] = [];
  proxy.on('error', (e: NodeJS.ErrnoException) => errors.push(e));
  await t.rejects(proxy.ready(), { code: 'EADDRINUSE', syscall: 'listen' });
  await until('the error event', () => errors.length > 0);
  t.match(errors[0], { code: 'EADDRINUSE', syscall: 'listen' });
  await holder.close();
  await proxy.listen();
  await proxy.ready();
  t.pass('bound once the port is free');
});

t.test('deferListen: nothing is bound until listen(); then a connection is accepted', T, async (t) => {
  const a = testAddresses();
  const probe = await RawPeer.listen(a.ours);
  const port = probe.port;
  await probe.close();
  const proxy = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1', listen: { address: a.ours, port }, deferListen: true });
  t.teardown(() => proxy.stop({ mode: 'departure', waitTimeSec: 0 }));
  await proxy.ready();
  // The port is still free: another socket can take it (and gives it back).
  const holder = await RawPeer.listen(a.ours, port);
  await holder.close();
  await proxy.listen();
  await proxy.listen(); // bound already: resolves again
  await t.rejects(RawPeer.listen(a.ours, port), { code: 'EADDRINUSE' }, 'bound by the speaker once listen() was called');
});

t.test('a speaker thread that dies is reported: threadExit, an error, every session Idle with the cause, calls rejected', T, async (t) => {
  const a = testAddresses();
  const peer = await RawPeer.listen(a.peer);
  // A small heap that a large route set exhausts: the thread dies as it would of any uncaught error.
  const proxy = SpeakerProxy.start({ localAs: 65001, bgpIdentifier: '10.0.0.1' }, SpeakerThread.spawn({ resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 } }));
  t.teardown(async () => {
    await proxy.stop({ mode: 'departure', waitTimeSec: 0 });
    await peer.close();
  });
  const errors: NodeJS.ErrnoException[] = [];
  proxy.on('error', (e: NodeJS.ErrnoException) => errors.push(e));
  const exit = once<{ message: string }>(proxy, 'threadExit', () => true, 50_000);
  await proxy.ready();
  proxy.addPeer({ name: 'p', address: a.peer, port: peer.port, peerAs: 65002, localAddress: a.ours, connectRetryTimeSec: 1 });
  const conn = await peer.accept(10_000);
  await establish(conn);
  await until('Established', () => proxy.peers()[0]?.state === 'Established');
  const routes: Route[] = Array.from({ length: 200_000 }, (_, i) => ({ prefix: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}/32`, family: 'ipv4-unicast', communities: [i] }));
  for (let k = 0; k < 60 && proxy.failure === undefined; k++) {
    proxy.setRoutes(routes.map((r) => ({ ...r, med: k })));
    await new Promise((r) => setTimeout(r, 300));
  }
  const { message } = await exit;
  t.match(message, /^speaker thread exited \(.*memory.*\): its BGP sessions are closed$/);
  t.equal(proxy.failure, message);
  t.ok(errors.some((e) => e.code === SPEAKER_THREAD_EXIT && e.message === message), 'an error with the code');
  t.match(proxy.peers(), [{ name: 'p', state: 'Idle', lastReason: { kind: 'transportError', message } }]);
  await t.rejects(proxy.adjRibOut('p'), { code: SPEAKER_THREAD_EXIT });
  proxy.setRoutes([]);
  t.equal(proxy.peers().length, 1, 'later commands are ignored');
  await conn.waitClosed();
  t.pass('the dead thread\'s TCP connection is closed');
});
