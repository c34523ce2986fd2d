// Extended communities end to end with FRR 8.4 as the router: `herald run` with static routes whose
// `extendedCommunities` (YAML config, src/config/extended-communities.ts → src/daemon/mapping.ts staticRoute) carry
// link bandwidth in both forms (transitive 0x00/0x04, Herald's default, and non-transitive 0x40/0x04 over this eBGP
// session) and a route target, on IPv4 and IPv6 routes. FRR shows them in `show bgp ... json` (`extendedCommunity`,
// "LB:AS:bytes/s (rate)"). A reload with a new bandwidth re-announces that route with the new value.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, loopbackPair } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { skipUnless } from '../helpers/prereq.ts';
import { Frr, frrAvailable } from '../helpers/frr.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const skip = skipUnless({ frr: frrAvailable() });

/** UPDATE messages FRR received from Herald (`show bgp neighbors N json` messageStats.updatesRecv). */
async function updatesReceived(frr: Frr): Promise<number | undefined> {
  const n = (await frr.neighbor()) as { messageStats?: { updatesRecv?: number } } | undefined;
  return n?.messageStats?.updatesRecv;
}

/** FRR's `extendedCommunity.string` of the (single) path of a prefix, or undefined when FRR does not have it. */
async function extCommunity(frr: Frr, family: 'ipv4' | 'ipv6', prefix: string): Promise<string | undefined> {
  const j = JSON.parse(await frr.vtysh(`show bgp ${family} unicast ${prefix} json`)) as { paths?: { extendedCommunity?: { string?: string } }[] };
  return j.paths?.[0]?.extendedCommunity?.string;
}

t.test('FRR shows the link bandwidth and route target communities of our static routes', { skip, timeout: 90_000 }, async (t) => {
  const addr = loopbackPair();
  const [frrPort, adminPort] = [await freePort(addr.bird), await freePort('127.0.0.1')];
  const frr = await Frr.start({ local: addr.bird, port: frrPort, as: 65000, neighbor: addr.ours, neighborAs: 65001 });
  t.teardown(() => frr.stop());

  const proc = new DaemonProcess('ext-frr');
  t.teardown(() => proc.stop(15_000));
  const configPath = join(proc.dir, 'herald.yaml');
  const config = (bandwidth: string) => ({
    bgp: { localAs: 65001, routerId: '10.0.0.1' },
    // FRR refuses a 127/8 NEXT_HOP (martian): routable next hops for this peer (docs/routes.md "Interop notes").
    peers: [{ name: 'frr', address: addr.bird, port: frrPort, peerAs: 65000, localAddress: addr.ours, connectRetryTime: 1, nextHop: '198.51.100.1', nextHopV6: '2001:db8::ff' }],
    routes: [
      { prefix: '192.0.2.10/32', extendedCommunities: ['rt:65001:100', `lb:65001:${bandwidth}`] },
      { prefix: '192.0.2.11/32', extendedCommunities: ['lb:65001:1mbps:non-transitive'] },
      { prefix: '2001:db8::10/128', extendedCommunities: ['lb:65001:10gbps'] },
    ],
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
  });
  writeFileSync(configPath, stringify(config('3gbps')));
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
  t.teardown(() => {
    if (!t.passing()) t.comment(`herald stdout (tail):\n${proc.stdout.slice(-4000)}\nherald stderr (tail):\n${proc.stderr.slice(-2000)}`);
  });

  await frr.proc.waitFor(async () => (await frr.count('ipv4')) === 2 && (await frr.count('ipv6')) === 1, 'three routes in FRR', 45_000, 250);
  // 3 Gbit/s = 375 000 000 bytes/s, transitive (type 0x00); FRR prints the rate in bits.
  t.equal(await extCommunity(frr, 'ipv4', '192.0.2.10/32'), 'RT:65001:100 LB:65001:375000000 (3.000 Gbps)', 'route target and transitive link bandwidth');
  t.equal(await extCommunity(frr, 'ipv4', '192.0.2.11/32'), 'LB:65001:125000 (1.000 Mbps)', 'non-transitive link bandwidth accepted from an eBGP peer');
  t.equal(await extCommunity(frr, 'ipv6', '2001:db8::10/128'), 'LB:65001:1250000000 (10.000 Gbps)', 'IPv6 route (MP_REACH_NLRI) with link bandwidth');

  // The bandwidth changes (endpoint count in the weighting use): only that route is re-announced, with the new value.
  const before = await updatesReceived(frr);
  t.ok(before !== undefined && before >= 3, `FRR counted the UPDATEs so far (${before})`);
  writeFileSync(configPath, stringify(config('1gbps')));
  proc.child?.kill('SIGHUP');
  await frr.proc.waitFor(
    async () => (await extCommunity(frr, 'ipv4', '192.0.2.10/32')) === 'RT:65001:100 LB:65001:125000000 (1.000 Gbps)' || undefined,
    'new link bandwidth in FRR after reload',
    20_000,
    250,
  );
  t.equal(await extCommunity(frr, 'ipv4', '192.0.2.11/32'), 'LB:65001:125000 (1.000 Mbps)', 'the other route unchanged');
  t.equal(await updatesReceived(frr), (before ?? NaN) + 1, 'one UPDATE: the other routes (other attribute groups) were not re-sent');
  t.equal(await frr.neighborState(), 'Established', 'the session stayed up');
});
