// The Speaker's BFD tie-in (bgp/bfd/peers.ts, bgp/speaker.ts) over fake sessions and a fake BFD client: sessions
// configured per peer with the documented defaults, BGP reset with Cease / BFD Down (RFC 9384) on a path failure
// only, BFD changes without a BGP reset, status, and AdminDown before a stop's Cease.
import t from 'tap';
import { EventEmitter } from 'node:events';
import { Speaker } from '../../../bgp/speaker.ts';
import type { PeerSession } from '../../../bgp/speaker.ts';
import { FakeClock } from '../../../bgp/clock.ts';
import type { SessionOptions, StopRequest } from '../../../bgp/session/session.ts';
import type { BfdClient } from '../../../bgp/bfd/handle.ts';
import type { BfdPeerConfig, BfdSessionInfo } from '../../../bgp/bfd/engine.ts';
import type { BfdState } from '../../../bgp/bfd/packet.ts';
import type { BfdStateEvent } from '../../../bgp/bfd/peers.ts';

class FakeSession extends EventEmitter implements PeerSession {
  state = 'Idle';
  negotiated = undefined;
  lastReason = undefined;
  stats = { messagesSent: {}, messagesReceived: {}, prefixesReceived: 0, updatesReceived: 0, flaps: 0 };
  localAddress: string | undefined = '127.0.0.1';
  readonly options: SessionOptions;
  readonly log: string[];
  constructor(options: SessionOptions, log: string[]) {
    super();
    this.options = options;
    this.log = log;
  }
  get name(): string {
    return this.options.name;
  }
  start(): void {}
  acceptConnection(): void {
    throw new Error('the fake listener hands out no connections');
  }
  async stop(request?: StopRequest): Promise<void> {
    this.log.push(`stop ${this.name} ${typeof request === 'string' ? request : `6/${request?.subcode}`}`);
    this.state = 'Idle';
  }
  reset(cease?: { subcode: number }): void {
    this.log.push(`reset ${this.name} 6/${cease?.subcode}`);
    this.state = 'Idle';
  }
  setTxSource(): void {}
  kickTx(): void {}
}

class FakeBfd extends EventEmitter implements BfdClient {
  readonly log: string[];
  readonly configs = new Map<string, BfdPeerConfig>();
  private readonly infos = new Map<string, BfdSessionInfo>();
  constructor(log: string[]) {
    super();
    this.log = log;
  }
  /** add() rejects for these ids with this message, as the engine does for a second session to one address. */
  readonly refuse = new Map<string, string>();
  async add(id: string, c: BfdPeerConfig): Promise<void> {
    this.log.push(`bfd add ${id}`);
    const refused = this.refuse.get(id);
    if (refused !== undefined) throw new RangeError(refused);
    this.configs.set(id, c);
  }
  async update(id: string, c: BfdPeerConfig): Promise<void> {
    this.log.push(`bfd update ${id}`);
    this.configs.set(id, c);
  }
  async remove(id: string): Promise<void> {
    this.log.push(`bfd remove ${id}`);
    this.configs.delete(id);
  }
  async adminDown(): Promise<void> {
    this.log.push('bfd adminDown');
  }
  async adminUp(): Promise<void> {
    this.log.push('bfd adminUp');
  }
  info(id: string): BfdSessionInfo | undefined {
    return this.infos.get(id);
  }
  async close(): Promise<void> {
    this.log.push('bfd close');
  }
  /** Reports a state change of `id` as the engine would. */
  change(id: string, from: BfdState, to: BfdState, diag: number, remoteState: BfdState, detectionTimeMs = to === 'Up' ? 900 : 0): void {
    const info = { state: to, remoteState, localDiag: diag, detectionTimeMs, transmitIntervalMs: 300, localDiscriminator: 7, remoteDiscriminator: 9, ttlCheck: 'kernel' } as BfdSessionInfo;
    this.infos.set(id, info);
    this.emit('update', id, { kind: 'state', from, to, diag, remoteState, remoteDiag: 0 }, info);
  }
}

function setup() {
  const log: string[] = [];
  const clock = new FakeClock(5000);
  const sessions = new Map<string, FakeSession>();
  let bfd: FakeBfd | undefined;
  const speaker = new Speaker({
    localAs: 65001,
    bgpIdentifier: '192.0.2.1',
    clock,
    createSession: (o) => {
      const s = new FakeSession(o, log);
      sessions.set(o.name, s);
      return s;
    },
    createBfd: () => (bfd = new FakeBfd(log)),
  });
  const events: BfdStateEvent[] = [];
  speaker.on('bfdState', (e: BfdStateEvent) => events.push(e));
  return { speaker, log, clock, sessions, events, bfd: () => bfd };
}

const tick = () => new Promise((r) => setImmediate(r));

t.test('sessions per peer with the documented defaults; no BFD client without a BFD peer', async (t) => {
  const { speaker, bfd } = setup();
  speaker.addPeer({ name: 'plain', address: '192.0.2.9', peerAs: 65002 });
  t.equal(bfd(), undefined, 'no BFD worker for peers without bfd');
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, localAddress: '192.0.2.1', bfd: {} });
  speaker.addPeer({ name: 'r2', address: '198.51.100.2', peerAs: 65002, ebgpMultihop: 3, bfd: { transmitIntervalMs: 100, receiveIntervalMs: 200, detectMultiplier: 5, passive: true, minimumTtl: 250 } });
  await tick();
  t.same(bfd()?.configs.get('r1'), { remoteAddress: '192.0.2.2', localAddress: '192.0.2.1', multihop: false, transmitIntervalMs: 300, receiveIntervalMs: 300, detectMultiplier: 3, passive: false });
  t.same(bfd()?.configs.get('r2'), { remoteAddress: '198.51.100.2', multihop: true, transmitIntervalMs: 100, receiveIntervalMs: 200, detectMultiplier: 5, passive: true, minimumTtl: 250 }, 'ebgpMultihop > 1 makes it multihop');
  t.equal(speaker.peers().find((p) => p.name === 'plain')?.bfd, undefined);
  t.equal(speaker.peers().find((p) => p.name === 'r1')?.bfd?.state, 'Down', 'configured, not Up yet');
});

t.test('a session the engine refuses (a second one to one address, issue 35 N10): the peer\'s status says so', async (t) => {
  const { speaker, bfd } = setup();
  const errors: string[] = [];
  speaker.on('error', (e: Error) => errors.push(e.message));
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  bfd()?.refuse.set('r2', 'BFD session "r1" already runs single-hop to 192.0.2.2; one session per peer address and hop mode');
  speaker.addPeer({ name: 'r2', address: '192.0.2.2', port: 1179, peerAs: 65002, bfd: {} });
  await tick();
  const r2 = speaker.peers().find((p) => p.name === 'r2')?.bfd;
  t.equal(r2?.state, 'Down');
  t.match(r2?.error, /^BFD is not running: BFD session "r1" already runs single-hop to 192\.0\.2\.2/, 'not silently without BFD');
  t.equal(speaker.peers().find((p) => p.name === 'r1')?.bfd?.error, undefined);
});

t.test('Up → Down (Detection Time expired): BGP reset with Cease / BFD Down; the event and status say so', async (t) => {
  const { speaker, log, clock, sessions, events, bfd } = setup();
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  const s = sessions.get('r1')!;
  s.state = 'Established';
  bfd()!.change('r1', 'Down', 'Up', 0, 'Init');
  clock.advance(1000);
  bfd()!.change('r1', 'Up', 'Down', 1, 'Down');
  t.ok(log.includes('reset r1 6/10'), 'Cease subcode 10 (BFD Down, RFC 9384)');
  t.same(events.map((e) => [e.from, e.to, e.failure]), [['Down', 'Up', false], ['Up', 'Down', true]]);
  t.equal(events[1]?.diagnostic, 'Control Detection Time Expired');
  t.equal(events[1]?.detectionTimeMs, 900, 'the Detection Time in force before Down');
  const st = speaker.peers()[0]?.bfd;
  t.equal(st?.stateChanges, 2);
  t.same(st?.lastDown, { at: 6000, diagnostic: 'Control Detection Time Expired', remoteState: 'Down', detectionTimeMs: 900 });
  t.equal(st?.state, 'Down');
});

t.test('no BGP reset when the peer went AdminDown, when never Up, or when BGP has no connection', async (t) => {
  const { speaker, log, sessions, events, bfd } = setup();
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  const s = sessions.get('r1')!;
  s.state = 'Established';
  bfd()!.change('r1', 'Down', 'Up', 0, 'Init');
  bfd()!.change('r1', 'Up', 'Down', 3, 'AdminDown');
  t.notOk(log.some((l) => l.startsWith('reset')), 'peer AdminDown (RFC 5882 §3.2): not a path failure');
  bfd()!.change('r1', 'Down', 'Init', 0, 'Down');
  bfd()!.change('r1', 'Init', 'Down', 1, 'Down');
  t.notOk(log.some((l) => l.startsWith('reset')), 'Init → Down: never was Up');
  s.state = 'Active';
  bfd()!.change('r1', 'Down', 'Up', 0, 'Init');
  bfd()!.change('r1', 'Up', 'Down', 1, 'Down');
  t.notOk(log.some((l) => l.startsWith('reset')), 'no connection to reset');
  t.same(events.map((e) => e.failure), [false, false, false, false, false, true]);
});

t.test('changing BFD settings updates the BFD session and never resets BGP; removing them removes it', async (t) => {
  const { speaker, log, sessions, bfd } = setup();
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  const s = sessions.get('r1');
  speaker.updatePeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: { transmitIntervalMs: 100 } });
  await tick();
  t.equal(sessions.get('r1'), s, 'same BGP session');
  t.notOk(log.some((l) => l.startsWith('stop') || l.startsWith('reset')));
  t.equal(bfd()?.configs.get('r1')?.transmitIntervalMs, 100);
  speaker.updatePeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002 });
  await tick();
  t.ok(log.includes('bfd remove r1'));
  t.equal(speaker.peers()[0]?.bfd, undefined);
  speaker.updatePeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  await speaker.removePeer('r1');
  await tick();
  t.same(log.filter((l) => l.startsWith('bfd')), ['bfd add r1', 'bfd update r1', 'bfd remove r1', 'bfd add r1', 'bfd remove r1']);
});

t.test('stop restart: BFD AdminDown before any session ends (RFC 5882 §3.2); departure: after the withdrawals', async (t) => {
  const r = setup();
  r.speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  r.sessions.get('r1')!.state = 'Established';
  await r.speaker.stop({ mode: 'restart' });
  t.same(r.log.filter((l) => l !== 'bfd add r1'), ['bfd adminDown', 'stop r1 6/2', 'bfd close'], 'Established, no graceful restart agreed in this fake: Cease 6/2');

  const d = setup();
  d.speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  const drained = new Promise((resolve) => d.speaker.once('drained', () => resolve(d.log.push('withdrawn'))));
  const stopped = d.speaker.stop({ mode: 'departure', waitTimeSec: 1 });
  d.clock.advance(1000);
  await drained;
  await stopped;
  t.same(d.log.filter((l) => l !== 'bfd add r1'), ['withdrawn', 'bfd adminDown', 'stop r1 6/2', 'bfd close']);
});

t.test('bfdAdminDown / bfdAdminUp reach the BFD client (the lifecycle API)', async (t) => {
  const { speaker, log } = setup();
  speaker.addPeer({ name: 'r1', address: '192.0.2.2', peerAs: 65002, bfd: {} });
  await speaker.bfdAdminDown({ timeoutMs: 10 });
  await speaker.bfdAdminUp();
  t.same(log.slice(1), ['bfd adminDown', 'bfd adminUp']);
});
