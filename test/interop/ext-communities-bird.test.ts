// Extended communities end to end with BIRD 2 as the router: `herald run` with static routes whose
// `extendedCommunities` (YAML config) hold each RFC 4360 / RFC 5668 layout Herald writes, both link bandwidth forms
// and an IPv6 address specific one (RFC 5701). BIRD prints them in `show route all` as BGP.ext_community (rt, ro,
// "unknown 0x4" for link bandwidth, with the float32 bits as an integer) and, not knowing RFC 5701, attribute 25 raw
// as "BGP.19 [t]" (t = optional transitive).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { skipUnless } from '../helpers/prereq.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const skip = skipUnless({ bird2: birdAvailable() });

/** The IEEE 754 single-precision bits of a number, as BIRD prints a link bandwidth's Local Administrator. */
function floatBits(x: number): number {
  const b = Buffer.alloc(4);
  b.writeFloatBE(x);
  return b.readUInt32BE(0);
}

t.test('BIRD shows BGP.ext_community for each layout and attribute 25 raw', { skip, timeout: 90_000 }, async (t) => {
  const addr = loopbackPair();
  const [birdPort, ourPort, adminPort] = [await freePort(addr.bird), await freePort(addr.ours), await freePort('127.0.0.1')];
  const bird = await Bird.start(bgpProtocol({ name: 'hx', local: addr.bird, localPort: birdPort, localAs: 65000, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65001, passive: true }));
  t.teardown(() => bird.stop());

  const proc = new DaemonProcess('ext-bird');
  t.teardown(() => proc.stop(15_000));
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: 65001, routerId: '10.0.0.1' },
      peers: [{ name: 'b', address: addr.bird, port: birdPort, peerAs: 65000, localAddress: addr.ours, connectRetryTime: 1, nextHopV6: '2001:db8::ff' }],
      routes: [
        {
          prefix: '192.0.2.10/32',
          extendedCommunities: ['rt:65001:100', 'ro:192.0.2.9:7', 'rt:4200000000:5', 'lb:65001:1gbps', 'lb:65001:1mbps:non-transitive', '0x4300000000000002'],
        },
        { prefix: '2001:db8::10/128', extendedCommunities: ['rt:[2001:db8::1]:100', 'lb:65001:125000000'] },
      ],
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(proc.dir, 'state'),
    }),
  );
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
  t.teardown(() => {
    if (!t.passing()) t.comment(`herald stdout (tail):\n${proc.stdout.slice(-4000)}\nherald stderr (tail):\n${proc.stderr.slice(-2000)}`);
  });

  const v4 = await bird.waitFor(async () => (await bird.routes('table master4')).find((r) => r.prefix === '192.0.2.10/32'), 'IPv4 route in BIRD', 45_000);
  t.equal(
    v4.attrs['BGP.ext_community'],
    [
      '(rt, 65001, 100)',
      '(ro, 192.0.2.9, 7)',
      '(rt, 4200000000, 5)',
      `(unknown 0x4, 65001, ${floatBits(125_000_000)})`, // transitive link bandwidth 0x00/0x04
      `(unknown 0x4004, 65001, ${floatBits(125_000)})`, // non-transitive 0x40/0x04
      '(generic, 0x43000000, 0x2)', // opaque, non-transitive (RFC 8097 origin validation state "invalid")
    ].join(' '),
    'BGP.ext_community in the order sent',
  );
  const v6 = await bird.waitFor(async () => (await bird.routes('table master6')).find((r) => r.prefix === '2001:db8::10/128'), 'IPv6 route in BIRD', 30_000);
  t.equal(v6.attrs['BGP.ext_community'], `(unknown 0x4, 65001, ${floatBits(125_000_000)})`);
  // The route parser keeps `Key: value` lines only; BIRD's line for an attribute it does not know is "BGP.19 [t]: ...".
  const raw6 = /^\s+BGP\.19 \[t\]: (.*)$/m.exec(await bird.birdc('show route all table master6'))?.[1];
  t.equal(raw6, '00 02 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01 00 64', 'RFC 5701 route target [2001:db8::1]:100, optional transitive');
});
