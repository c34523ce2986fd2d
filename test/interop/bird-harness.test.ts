// Parsers of the BIRD harness (test/helpers/bird.ts) on recorded BIRD 2.0.12 output, and config rendering.
import t from 'tap';
import { bgpProtocol, freePort, loopbackPair, parseProtocols, parseRouteTrace, parseRoutes } from '../helpers/bird.ts';
import { run } from '../helpers/daemon-process.ts';

const routesText = `BIRD 2.0.12 ready.
Table master4:
10.1.0.0/24          unreachable [a 19:07:40.488 from 127.0.20.1] * (100) [i]
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 
\tBGP.next_hop: 127.0.20.1
\tBGP.local_pref: 100
                     unreachable [c 19:07:43.489 from 127.0.20.3] (100) [AS65003i]
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 65003
\tBGP.next_hop: 127.0.20.3
\tBGP.local_pref: 100
10.2.0.0/24          unreachable [a 19:07:40.488 from 127.0.20.1] * (100) [i]
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 
\tBGP.next_hop: 127.0.20.1
\tBGP.med: 50
\tBGP.local_pref: 300
\tBGP.community: (65000,1) (65000,2)
\tBGP.large_community: (65000, 1, 2)
10.3.0.0/24          unicast [b1 12:00:00.000 from 192.168.1.1] * (100) [AS65002 65010i]
\tvia 192.168.1.1 on eth0 weight 1
\tvia 192.168.1.2 on eth1 weight 1
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 65002 65010
\tBGP.next_hop: 192.168.1.1
Table master6:
2001:db8::/48        unreachable [h 12:00:01.000 from 127.0.20.9] * (100) [AS4200000001i]
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 4200000001
\tBGP.next_hop: 2001:db8::1 fe80::1
`;

t.test('parseRoutes: prefixes, paths, ECMP next hops, communities, table', async (t) => {
  const r = parseRoutes(routesText);
  t.equal(r.length, 5, 'five route entries');
  const [a, c, b, e, v6] = r;
  t.same([a?.prefix, a?.primary, a?.from, a?.protocol, a?.type, a?.bgpPath, a?.localPref], ['10.1.0.0/24', true, '127.0.20.1', 'a', 'unreachable', [], 100]);
  t.same([c?.prefix, c?.primary, c?.from, c?.bgpPath], ['10.1.0.0/24', false, '127.0.20.3', [65003]], 'second path of the same prefix');
  t.same([b?.med, b?.localPref, b?.communities, b?.largeCommunities], [50, 300, ['65000:1', '65000:2'], ['65000:1:2']]);
  t.same([e?.type, e?.nextHops, e?.bgpPath], ['unicast', ['192.168.1.1', '192.168.1.2'], [65002, 65010]], 'ECMP');
  t.same([v6?.table, v6?.prefix, v6?.bgpNextHop, v6?.bgpPath], ['master6', '2001:db8::/48', ['2001:db8::1', 'fe80::1'], [4200000001]]);
  t.equal(b?.attrs['BGP.origin'], 'IGP');
});

const protocolsText = `BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
device1    Device     ---        up     19:07:39.576  
a          BGP        ---        up     19:07:29.234  Established   
  BGP state:          Established
    Neighbor address: 127.0.20.1
    Neighbor AS:      65001
    Local AS:         65002
    Neighbor ID:      10.0.0.1
    Local capabilities
      Multiprotocol
        AF announced: ipv4 ipv6
      Route refresh
      4-octet AS numbers
    Neighbor capabilities
      Multiprotocol
        AF announced: ipv4
      Route refresh
    Session:          external multihop AS4
    Source address:   127.0.20.2
    Hold timer:       204.485/240
    Keepalive timer:  70.314/80
  Channel ipv4
    State:          UP
    Table:          master4
    Routes:         1 imported, 0 exported, 1 preferred
  Channel ipv6
    State:          DOWN
b          BGP        ---        start  19:07:32.271  Passive       Received: Administrative shutdown
  Message:        going down now
  BGP state:          Passive
    Neighbor address: 127.0.20.3
    Neighbor AS:      65001
    Local AS:         65001
    Last error:       Received: Administrative shutdown
`;

t.test('parseProtocols: BGP state, capabilities, channels, last error and shutdown message', async (t) => {
  const p = parseProtocols(protocolsText);
  t.same(p.map((x) => x.name), ['device1', 'a', 'b']);
  const a = p[1];
  t.same([a?.bgpState, a?.neighborAddress, a?.neighborAs, a?.localAs, a?.neighborId, a?.session], ['Established', '127.0.20.1', 65001, 65002, '10.0.0.1', 'external multihop AS4']);
  t.same(a?.localCapabilities, ['Multiprotocol', 'AF announced: ipv4 ipv6', 'Route refresh', '4-octet AS numbers']);
  t.same(a?.neighborCapabilities, ['Multiprotocol', 'AF announced: ipv4', 'Route refresh']);
  t.equal(a?.holdTimer, '204.485/240');
  t.equal(a?.channels.ipv4?.Routes, '1 imported, 0 exported, 1 preferred');
  t.equal(a?.channels.ipv6?.State, 'DOWN');
  const b = p[2];
  t.same([b?.state, b?.info, b?.message, b?.lastError], ['start', 'Passive       Received: Administrative shutdown', 'going down now', 'Received: Administrative shutdown']);
});

t.test('bgpProtocol renders multihop for eBGP only, MD5, as4 off, passive', async (t) => {
  const ebgp = bgpProtocol({ name: 'x', local: '127.1.1.2', localPort: 1790, localAs: 65002, neighbor: '127.1.1.1', neighborPort: 179, neighborAs: 65001, passive: true, password: 'pw', disableAs4: true });
  t.match(ebgp, /multihop;/);
  t.match(ebgp, /passive on;/);
  t.match(ebgp, /password "pw";/);
  t.match(ebgp, /enable as4 no;/);
  t.match(ebgp, /strict bind yes;/);
  t.match(ebgp, /ipv4 \{ import all; export none; \};/);
  const ibgp = bgpProtocol({ name: 'y', local: '127.1.1.2', localPort: 1790, localAs: 65001, neighbor: '127.1.1.1', neighborPort: 179, neighborAs: 65001, families: ['ipv6'] });
  t.notMatch(ibgp, /multihop/);
  t.notMatch(ibgp, /ipv4/);
  const p1 = loopbackPair();
  const p2 = loopbackPair();
  t.not(p1.ours, p2.ours, 'fresh addresses per call');
  t.match(p1.bird, /^127\.\d+\.\d+\.2$/);
});

t.test('parseRouteTrace: route imports from a recorded BIRD 2.0.12 log, in order', async (t) => {
  const log = [
    '2026-12-01 09:20:25.545 <TRACE> herald: BGP session established',
    '2026-12-01 09:20:25.551 <TRACE> herald.ipv4 > added [best] 192.0.2.1/32 0L 2G unreachable',
    '2026-12-01 09:20:25.652 <TRACE> herald: Neighbor graceful restart detected',
    '2026-12-01 09:20:28.481 <TRACE> herald.ipv4 > ignored 192.0.2.1/32 0L 2G unreachable',
    '2026-12-01 09:20:30.508 <TRACE> h2.ipv6 > removed [sole] 2001:db8::1/128 0L 2G unreachable',
    '2026-12-01 09:20:30.508 <RMT> herald: Received: Administrative shutdown: "leaving"',
  ].join('\n');
  const ev = parseRouteTrace(log);
  t.same(ev.map((e) => [e.protocol, e.channel, e.action, e.prefix]), [
    ['herald', 'ipv4', 'added', '192.0.2.1/32'],
    ['herald', 'ipv4', 'ignored', '192.0.2.1/32'],
    ['h2', 'ipv6', 'removed', '2001:db8::1/128'],
  ]);
  t.equal(ev[0]!.at, '2026-12-01 09:20:25.551');
  t.match(bgpProtocol({ name: 'x', local: '127.0.0.2', localPort: 1, localAs: 1, neighbor: '127.0.0.1', neighborPort: 2, neighborAs: 1, trace: true }), /debug \{ states, routes, events \};/);
});

t.test('run() (and so birdc and vtysh) resolves with all of stdout, also what is written after the command itself exited', async (t) => {
  // 'exit' can come before the last of stdout is read: birdc answers looked empty now and then, and a vtysh JSON
  // answer was cut ("Unexpected end of JSON input"). A child still holding the pipe after `sh` exits shows it every time.
  t.equal(await run('sh', ['-c', '(sleep 0.3; echo late) & echo early']), 'early\nlate\n');
  await t.rejects(run('sh', ['-c', 'echo out; echo err >&2; exit 3']), /sh -c .* exited 3: err\nout\n/, 'a failure names the command, the code and the output');
});

t.test('freePort never hands out a port twice in one process (regression: the apiserver was given etcd\'s peer port)', async (t) => {
  const ports = [];
  for (let i = 0; i < 300; i++) ports.push(await freePort('127.0.0.1'));
  t.equal(new Set(ports).size, ports.length, `${ports.length} distinct ports`);
});
