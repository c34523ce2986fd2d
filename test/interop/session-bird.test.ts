// Session interop with a real BIRD 2 on loopback (test/helpers/bird.ts): eBGP/iBGP establishment, families,
// a 2-octet-only BIRD (AS_TRANS), hold timer expiry (SIGSTOP), BIRD restart, TCP MD5, our Cease text in BIRD,
// BIRD dialling our BgpListener. Until the Speaker drives sessions, a trivial TxSource sends one UPDATE.
import t from 'tap';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../helpers/bird.ts';
import { Session } from '../../bgp/session/session.ts';
import type { SessionOptions, TxSource } from '../../bgp/session/session.ts';
import { BgpListener } from '../../bgp/session/listener.ts';
import { encodeMessage } from '../../bgp/codec/message.ts';
import { asSequence, communities, largeCommunities, localPref, nextHop, origin, update } from '../../bgp/codec/build.ts';
import type { StateReason } from '../../bgp/fsm/state.ts';
import type { PathAttribute } from '../../bgp/codec/types.ts';

if (!birdAvailable()) {
  t.comment('bird2 is not installed (apt-get install -y bird2): interop tests cannot run');
  t.fail('bird2 missing');
}

const T = { timeout: 60_000 };

/** A TxSource that sends one UPDATE for 10.77.x.0/24 once, then nothing. */
function oneUpdate(localAs: number, ibgp: boolean, nh: string, prefix = '10.77.1.0/24'): TxSource & { sent: number } {
  const src = {
    sent: 0,
    nextMessage(ctx: Parameters<TxSource['nextMessage']>[0]) {
      if (src.sent > 0) return undefined;
      src.sent++;
      const attrs = [origin('IGP'), asSequence(ibgp ? [] : [localAs]), nextHop(nh), communities(['65000:7']), largeCommunities(['65000:1:2'])];
      const all: PathAttribute[] = [...attrs];
      if (ibgp) all.push(localPref(250));
      return encodeMessage(update({ pathAttributes: all, nlri: [prefix] }), ctx);
    },
  };
  return src;
}

interface Env {
  bird: Bird;
  session: Session;
  addr: ReturnType<typeof loopbackPair>;
  birdPort: number;
  states: { to: string; reason: StateReason }[];
}

async function start(
  t: { teardown(fn: () => unknown): void },
  o: { localAs?: number; birdAs?: number; birdSeesUsAs?: number; holdTimeSec?: number; birdHold?: number; password?: string; disableAs4?: boolean; session?: Partial<SessionOptions> } = {},
): Promise<Env> {
  const addr = loopbackPair();
  const birdPort = await freePort(addr.bird);
  const localAs = o.localAs ?? 65001;
  const birdAs = o.birdAs ?? 65002;
  const protoOpts: Parameters<typeof bgpProtocol>[0] = {
    name: 'herald',
    local: addr.bird,
    localPort: birdPort,
    localAs: birdAs,
    neighbor: addr.ours,
    neighborPort: 179,
    neighborAs: o.birdSeesUsAs ?? localAs,
    passive: true,
  };
  if (o.birdHold !== undefined) protoOpts.holdTimeSec = o.birdHold;
  if (o.password !== undefined) protoOpts.password = o.password;
  if (o.disableAs4) protoOpts.disableAs4 = true;
  const bird = await Bird.start(bgpProtocol(protoOpts));
  const session = new Session({
    name: 'bird',
    localAs,
    peerAs: birdAs,
    bgpIdentifier: '10.0.0.1',
    remoteAddress: addr.bird,
    remotePort: birdPort,
    localAddress: addr.ours,
    holdTimeSec: o.holdTimeSec ?? 90,
    connectRetryTimeSec: 5,
    passive: false,
    families: ['ipv4-unicast', 'ipv6-unicast'],
    ...(o.password !== undefined ? { md5Password: o.password } : {}),
    ...o.session,
  });
  const states: Env['states'] = [];
  session.on('stateChange', (e: { to: string; reason: StateReason }) => states.push(e));
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 3000))]);
    await bird.stop();
  });
  return { bird, session, addr, birdPort, states };
}

async function waitEstablished(env: Env, what = 'BIRD Established'): Promise<void> {
  await env.bird.waitFor(async () => env.session.state === 'Established' && (await env.bird.protocol('herald'))?.bgpState === 'Established', what);
}

t.test('eBGP: establishes, both families negotiated, one UPDATE reaches BIRD with its attributes', T, async (t) => {
  const env = await start(t);
  const src = oneUpdate(65001, false, env.addr.ours);
  env.session.setTxSource(src);
  env.session.start();
  await waitEstablished(env);
  t.same(env.session.negotiated?.families, ['ipv4-unicast', 'ipv6-unicast']);
  t.equal(env.session.negotiated?.fourOctetAs, true);
  const p = await env.bird.protocol('herald');
  t.match(p?.session ?? '', /external/);
  t.match(p?.session ?? '', /AS4/);
  t.equal(p?.neighborId, '10.0.0.1');
  t.ok(p?.neighborCapabilities.includes('AF announced: ipv4 ipv6'), `BIRD sees our families: ${p?.neighborCapabilities.join('; ')}`);
  const routes = await env.bird.waitFor(async () => {
    const r = await env.bird.routes();
    return r.length > 0 ? r : undefined;
  }, 'route in BIRD');
  t.equal(routes.length, 1);
  const r = routes[0];
  t.equal(r?.prefix, '10.77.1.0/24');
  t.same(r?.bgpPath, [65001]);
  t.same(r?.communities, ['65000:7']);
  t.same(r?.largeCommunities, ['65000:1:2']);
  t.same(r?.bgpNextHop, [env.addr.ours]);
  t.equal(r?.localPref, 100, "BIRD's own default: we sent no LOCAL_PREF on eBGP");
});

t.test('iBGP: establishes as internal, LOCAL_PREF reaches BIRD', T, async (t) => {
  const env = await start(t, { birdAs: 65001 });
  env.session.setTxSource(oneUpdate(65001, true, env.addr.ours));
  env.session.start();
  await waitEstablished(env);
  const p = await env.bird.protocol('herald');
  t.match(p?.session ?? '', /internal/);
  const routes = await env.bird.waitFor(async () => {
    const r = await env.bird.routes();
    return r.length > 0 ? r : undefined;
  }, 'route in BIRD');
  t.equal(routes[0]?.localPref, 250);
  t.same(routes[0]?.bgpPath, []);
});

t.test('2-octet-only BIRD (enable as4 no): session without 4-octet AS; 2-octet AS_PATH arrives intact', T, async (t) => {
  const env = await start(t, { disableAs4: true });
  env.session.setTxSource(oneUpdate(65001, false, env.addr.ours));
  env.session.start();
  await waitEstablished(env);
  t.equal(env.session.negotiated?.fourOctetAs, false);
  const p = await env.bird.protocol('herald');
  t.notMatch(p?.session ?? '', /AS4/, 'BIRD: no AS4 session');
  t.notOk(p?.localCapabilities.includes('4-octet AS numbers'), 'BIRD did not offer 4-octet AS');
  const routes = await env.bird.waitFor(async () => {
    const r = await env.bird.routes();
    return r.length > 0 ? r : undefined;
  }, 'route in BIRD');
  t.same(routes[0]?.bgpPath, [65001]);
});

t.test('2-octet-only BIRD expecting AS_TRANS rejects our 4-octet AS capability with 2/2; we back off and keep retrying', T, async (t) => {
  // BIRD 2.0.12 reads the 4-octet AS capability even with `enable as4 no`, so it sees 4200000001, not AS_TRANS
  // (our OPEN's My AS field is AS_TRANS: checked byte-exactly in test/bgp/session/session.test.ts).
  const env = await start(t, { localAs: 4200000001, birdSeesUsAs: 23456, disableAs4: true });
  env.session.start();
  await env.bird.waitFor(async () => env.session.lastReason?.kind === 'notificationReceived', 'NOTIFICATION from BIRD');
  t.same(env.session.lastReason, { kind: 'notificationReceived', code: 2, subcode: 2 });
  await env.bird.waitFor(async () => (env.session.stats.messagesReceived.NOTIFICATION ?? 0) >= 3, 'two more attempts, each rejected');
  t.ok(env.session.nextRetryDelayMs <= 5000, 'the delay stays within connectRetryTimeSec (5 s)');
});

t.test('BIRD configured with a wrong AS for us rejects our OPEN (2/2); once corrected, we are Established within seconds', T, async (t) => {
  // connectRetryTimeSec 120, as in production: a session that waited the cap after an OPEN rejection would not be
  // back before this test's timeout.
  const env = await start(t, { birdSeesUsAs: 65099, session: { connectRetryTimeSec: 120 } });
  env.session.start();
  await env.bird.waitFor(async () => env.session.lastReason?.kind === 'notificationReceived', 'Bad Peer AS from BIRD');
  t.same(env.session.lastReason, { kind: 'notificationReceived', code: 2, subcode: 2 });
  await env.bird.reconfigure(
    bgpProtocol({ name: 'herald', local: env.addr.bird, localPort: env.birdPort, localAs: 65002, neighbor: env.addr.ours, neighborPort: 179, neighborAs: 65001, passive: true }),
  );
  await waitEstablished(env, 'Established after BIRD was corrected');
  t.equal(env.session.state, 'Established');
});

t.test('hold timer: SIGSTOP BIRD -> we send 4/0; after SIGCONT we reconnect', T, async (t) => {
  const env = await start(t, { holdTimeSec: 3, birdHold: 3 });
  env.session.start();
  await waitEstablished(env);
  t.equal(env.session.negotiated?.holdTimeSec, 3);
  const down = new Promise<StateReason>((resolve) => env.session.once('down', resolve));
  env.bird.pause();
  let reason: StateReason;
  try {
    reason = await Promise.race([down, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no hold timer expiry in 10 s')), 10_000))]);
  } finally {
    env.bird.resume();
  }
  t.same(reason, { kind: 'holdTimerExpired' });
  t.equal(env.session.stats.lastNotificationSent?.code, 4);
  await waitEstablished(env, 're-established after SIGCONT');
  t.ok(env.session.stats.flaps >= 1);
});

t.test('BIRD restart: the session goes down and comes back', T, async (t) => {
  const env = await start(t);
  env.session.start();
  await waitEstablished(env);
  const down = new Promise<StateReason>((resolve) => env.session.once('down', resolve));
  await env.bird.restart();
  const reason = await down;
  t.ok(['notificationReceived', 'connectionClosed', 'transportError'].includes(reason.kind), `down because ${JSON.stringify(reason)}`);
  await waitEstablished(env, 're-established after restart');
  t.equal(env.session.state, 'Established');
});

t.test('RFC 2385: TCP MD5 with BIRD password', T, async (t) => {
  const env = await start(t, { password: 'herald-md5' });
  env.session.start();
  await waitEstablished(env);
  t.pass('established with TCP MD5');
});

t.test('our Cease 6/2 with RFC 9003 text shows in BIRD', T, async (t) => {
  const env = await start(t);
  env.session.start();
  await waitEstablished(env);
  await env.session.stop({ subcode: 2, shutdownCommunication: 'herald maintenance' });
  const p = await env.bird.waitFor(async () => {
    const x = await env.bird.protocol('herald');
    return x?.message ? x : undefined;
  }, 'BIRD shows the shutdown message');
  t.equal(p.message, 'herald maintenance');
  t.match(p.lastError ?? '', /Received: Administrative shutdown/);
  t.same(env.session.lastReason, { kind: 'admin', message: 'herald maintenance' });
});

t.test('BIRD dials our BgpListener (passive session)', T, async (t) => {
  const addr = loopbackPair();
  const ourPort = await freePort(addr.ours);
  const birdPort = await freePort(addr.bird);
  const listener = new BgpListener({ address: addr.ours, port: ourPort });
  await listener.listen();
  const session = new Session({
    name: 'bird', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addr.bird,
    holdTimeSec: 90, connectRetryTimeSec: 5, passive: true, families: ['ipv4-unicast'],
  });
  listener.register(addr.bird, session);
  const bird = await Bird.start(
    bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65001, families: ['ipv4'] }),
  );
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 3000))]);
    await listener.close();
    await bird.stop();
  });
  session.start();
  await bird.waitFor(async () => session.state === 'Established' && (await bird.protocol('herald'))?.bgpState === 'Established', 'Established via listener');
  t.same(session.negotiated?.families, ['ipv4-unicast']);
});

t.test('RFC 5082 GTSM with BIRD ttl security', T, async (t) => {
  const env = await start(t, { session: { ttlSecurity: true } });
  await env.bird.stop();
  // restart BIRD with `ttl security yes` on the same addresses/port
  const bird = await Bird.start(
    bgpProtocol({ name: 'herald', local: env.addr.bird, localPort: env.birdPort, localAs: 65002, neighbor: env.addr.ours, neighborPort: 179, neighborAs: 65001, passive: true, extra: '  ttl security yes;' }),
  );
  t.teardown(() => bird.stop());
  env.session.start();
  await bird.waitFor(async () => env.session.state === 'Established' && (await bird.protocol('herald'))?.bgpState === 'Established', 'Established with GTSM');
  t.pass('established with GTSM on both sides');
});

t.test('BIRD dials our listener with TCP MD5', T, async (t) => {
  const addr = loopbackPair();
  const ourPort = await freePort(addr.ours);
  const birdPort = await freePort(addr.bird);
  const listener = new BgpListener({ address: addr.ours, port: ourPort });
  const session = new Session({
    name: 'bird', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addr.bird,
    holdTimeSec: 90, connectRetryTimeSec: 5, passive: true, families: ['ipv4-unicast'], md5Password: 'listen-md5',
  });
  listener.register(addr.bird, session);
  await listener.listen();
  const bird = await Bird.start(
    bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65001, families: ['ipv4'], password: 'listen-md5' }),
  );
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 3000))]);
    await listener.close();
    await bird.stop();
  });
  session.start();
  await bird.waitFor(async () => session.state === 'Established' && (await bird.protocol('herald'))?.bgpState === 'Established', 'Established via listener with MD5');
  t.equal(listener.rejected, 0);
});

t.test('both sides active (BIRD dials our listener while we dial BIRD): collision resolves to one session', T, async (t) => {
  const addr = loopbackPair();
  const ourPort = await freePort(addr.ours);
  const birdPort = await freePort(addr.bird);
  const listener = new BgpListener({ address: addr.ours, port: ourPort });
  await listener.listen();
  const session = new Session({
    name: 'bird', localAs: 65001, peerAs: 65002, bgpIdentifier: '10.0.0.1', remoteAddress: addr.bird, remotePort: birdPort,
    localAddress: addr.ours, holdTimeSec: 90, connectRetryTimeSec: 5, passive: false, families: ['ipv4-unicast'],
  });
  listener.register(addr.bird, session);
  const bird = await Bird.start(
    bgpProtocol({ name: 'herald', local: addr.bird, localPort: birdPort, localAs: 65002, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65001, families: ['ipv4'] }),
  );
  t.teardown(async () => {
    await Promise.race([session.stop(), new Promise((r) => setTimeout(r, 3000))]);
    await listener.close();
    await bird.stop();
  });
  // Start once BIRD's first connect is due (connect delay ~1 s) so both SYNs are likely in flight together.
  await new Promise((r) => setTimeout(r, 900));
  session.start();
  await bird.waitFor(async () => session.state === 'Established' && (await bird.protocol('herald'))?.bgpState === 'Established', 'one Established session');
  const p = await bird.protocol('herald');
  t.equal(p?.neighborId, '10.0.0.1');
  t.equal(session.state, 'Established');
});
