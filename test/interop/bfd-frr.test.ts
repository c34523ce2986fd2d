// BFD interop with FRR 8.4's bfdd, standalone (no zebra, no bgpd: FRR's bgpd reaches bfdd only through zebra),
// multihop on loopback (RFC 5883): Up both ways, timers negotiated, a Poll Sequence on a timer change without a
// flap, our AdminDown and FRR's (`shutdown`), and a silent Herald detected within bfdd's Detection Time.
import t from 'tap';
import { BfdHandle } from '../../bgp/bfd/handle.ts';
import type { BfdChange, BfdPeerConfig, BfdSessionInfo } from '../../bgp/bfd/engine.ts';
import { loopbackPair } from '../helpers/bird.ts';
import { Bfdd, hostBfdLock } from '../helpers/bfd.ts';

if (!Bfdd.available()) {
  t.comment('FRR bfdd is not installed (apt-get install -y frr): BFD interop with FRR cannot run');
  t.fail('bfdd missing');
}

const T = { timeout: 90_000 };
await hostBfdLock(t, 100_000); // one wildcard-bound BFD daemon on the host at a time (test/helpers/bfd.ts)

async function waitFor(f: () => Promise<boolean> | boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('multihop with bfdd: Up, timers, Poll Sequence, AdminDown both ways, silence detected', T, async (t) => {
  const addr = loopbackPair();
  const frr = await Bfdd.start({ peer: addr.ours, local: addr.bird, intervalMs: 100, detectMultiplier: 3 });
  t.teardown(() => frr.stop());
  const h = BfdHandle.start();
  t.teardown(() => h.close());
  const changes: BfdChange[] = [];
  h.on('update', (_id: string, c: BfdChange, _i: BfdSessionInfo) => changes.push(c));
  const cfg: BfdPeerConfig = { remoteAddress: addr.bird, localAddress: addr.ours, multihop: true, transmitIntervalMs: 100, receiveIntervalMs: 100, detectMultiplier: 3, passive: false, minimumTtl: 254 };
  await h.add('frr', cfg);
  const peer = async () => (await frr.peers())[0];
  await waitFor(async () => h.info('frr')?.state === 'Up' && (await peer())?.status === 'up', 'Up on both sides');
  await waitFor(async () => h.info('frr')?.detectionTimeMs === 300 && (await peer())?.['remote-transmit-interval'] === 100, 'timers negotiated');
  t.equal(h.info('frr')?.ttlCheck, 'kernel', 'bfdd sends TTL 255: our minimumTtl 254 is enforced');
  t.equal((await peer())?.['remote-id'], h.info('frr')?.localDiscriminator, 'bfdd knows our discriminator');

  await h.update('frr', { ...cfg, transmitIntervalMs: 200, receiveIntervalMs: 150 });
  await waitFor(async () => (await peer())?.['remote-transmit-interval'] === 200 && (await peer())?.['remote-receive-interval'] === 150, 'bfdd sees the new timers');
  await waitFor(() => !h.info('frr')?.pollActive, 'our poll answered');
  t.equal((await peer())?.status, 'up', 'no flap through the Poll Sequence');
  t.equal(h.info('frr')?.transmitIntervalMs, 200);

  await h.adminDown();
  await waitFor(async () => (await peer())?.status === 'down', 'bfdd sees our AdminDown');
  t.equal((await peer())?.['remote-diagnostic'], 'administratively down');
  await h.adminUp();
  await waitFor(async () => h.info('frr')?.state === 'Up' && (await peer())?.status === 'up', 'Up again');

  const from = changes.length;
  await frr.vtysh('configure terminal', 'bfd', `peer ${addr.ours} multihop local-address ${addr.bird}`, 'shutdown');
  await waitFor(() => h.info('frr')?.state === 'Down', 'we see bfdd AdminDown');
  const down = changes.slice(from).find((c) => c.kind === 'state' && c.to === 'Down');
  t.ok(down?.kind === 'state' && down.remoteState === 'AdminDown' && down.diag === 3, 'Down, Neighbor Signaled Session Down, remote AdminDown: not a path failure');
  await frr.vtysh('configure terminal', 'bfd', `peer ${addr.ours} multihop local-address ${addr.bird}`, 'no shutdown');
  await waitFor(async () => h.info('frr')?.state === 'Up' && (await peer())?.status === 'up', 'Up after no shutdown');

  const t0 = Date.now();
  await h.close(); // silent, no AdminDown: as if the node died
  await waitFor(async () => (await peer())?.status === 'down', 'bfdd detects the silence', 5000);
  t.equal((await peer())?.diagnostic, 'control detection time expired');
  t.comment(`bfdd declared Down ${Date.now() - t0} ms after our last packets (Detection Time 3 × 200 ms)`);
});
