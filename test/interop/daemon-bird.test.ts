// End to end: `herald run` in a child process with a YAML config, peering over loopback with a
// real BIRD 2 that has two passive protocols. Checks static routes with their attributes in
// BIRD, the admin API through the CLI, drain/undrain (RFC 8326) seen in BIRD, reload by SIGHUP
// adding a peer and by a file change removing it while the other session stays up, and SIGTERM
// ending the sessions with Cease / Administrative Shutdown.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, birdAvailable, freePort, loopbackPair, sinceMoved } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { main } from '../../src/cli/main.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const ROOT = join(import.meta.dirname, '..', '..');

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.test('herald run against BIRD: routes, drain, reload, shutdown', { timeout: 110_000 }, async (t) => {
    // BIRD keeps a second protocol with the same neighbour address Idle: each session gets its own pair.
    const addr = loopbackPair();
    const addr2 = loopbackPair();
    const [p1Port, p2Port, ourPort, adminPort] = [await freePort(addr.bird), await freePort(addr2.bird), await freePort(addr.ours), await freePort('127.0.0.1')];
    const bird = await Bird.start(
      bgpProtocol({ name: 'hp1', local: addr.bird, localPort: p1Port, localAs: 65001, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65000, passive: true, families: ['ipv4'] }) +
        bgpProtocol({ name: 'hp2', local: addr2.bird, localPort: p2Port, localAs: 65002, neighbor: addr2.ours, neighborPort: ourPort, neighborAs: 65000, passive: true, families: ['ipv4'] }),
    );
    t.teardown(() => bird.stop());

    const proc = new DaemonProcess('daemon-bird');
    t.teardown(() => proc.stop(15_000));
    const configPath = join(proc.dir, 'herald.yaml');
    const TOKEN = 'e2e-token';
    const peer1 = { name: 'p1', address: addr.bird, port: p1Port, peerAs: 65001, localAddress: addr.ours, holdTime: 30, connectRetryTime: 1, families: ['ipv4-unicast'], gracefulShutdown: { enabled: true, waitTime: 3 } };
    const peer2 = { name: 'p2', address: addr2.bird, port: p2Port, peerAs: 65002, localAddress: addr2.ours, holdTime: 30, connectRetryTime: 1, families: ['ipv4-unicast'] };
    const config = (peers: object[]) => ({
      bgp: { localAs: 65000, routerId: '10.0.0.1' },
      peers,
      routes: [
        { prefix: '10.77.0.1/32', communities: ['65000:7'], largeCommunities: ['65000:1:2'], med: 20 },
        { prefix: '10.77.0.2/32', peers: ['p1'] },
      ],
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(proc.dir, 'state'),
      logLevel: 'info',
    });
    writeFileSync(configPath, stringify(config([peer1])));
    proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath], { env: { ...process.env, HERALD_ADMIN_TOKEN: TOKEN } });

    const api = `http://127.0.0.1:${adminPort}`;
    const cli = async (...args: string[]) => {
      const out = { text: '', write(s: string) { this.text += s; return true; } };
      const err = { text: '', write(s: string) { this.text += s; return true; } };
      const code = await main([...args, '--api', api], { out, err, env: { HERALD_ADMIN_TOKEN: TOKEN } });
      return { code, out: out.text, err: err.text };
    };
    // On failure, show the daemon's last log lines next to BIRD's.
    t.teardown(() => {
      if (t.passing()) return;
      t.comment(`herald stdout (tail):\n${proc.stdout.slice(-4000)}\nherald stderr (tail):\n${proc.stderr.slice(-2000)}`);
    });
    const birdRoutes = async (proto: string) => (await bird.routes(`protocol ${proto}`)).map((r) => r.prefix).sort();

    // 1. The daemon serves its API (fails fast with its stderr if it exits), the session comes up,
    //    static routes are in BIRD with their attributes.
    await proc.waitFor(async () => (await fetch(`${api}/healthz`).catch(() => undefined))?.ok, 'admin API up', 20_000);
    await bird.waitFor(async () => (await bird.protocol('hp1'))?.bgpState === 'Established', 'hp1 Established', 30_000);
    await bird.waitFor(async () => (await birdRoutes('hp1')).length === 2, 'two routes from Herald on hp1');
    const r1 = (await bird.routes('protocol hp1')).find((r) => r.prefix === '10.77.0.1/32');
    t.same(r1?.communities, ['65000:7']);
    t.same(r1?.largeCommunities, ['65000:1:2']);
    t.equal(r1?.med, 20);
    t.same(r1?.bgpPath, [65000]);
    const since1 = (await bird.protocol('hp1'))?.since;

    // 2. The CLI sees the session and the Adj-RIB-Out.
    const peers = await cli('peers', '--json');
    t.equal(peers.code, 0, peers.err);
    t.match(JSON.parse(peers.out), [{ name: 'p1', state: 'Established', prefixes: { sent: 2 } }]);
    const routes = await cli('routes', '--json', '--peer', 'p1');
    t.same(JSON.parse(routes.out).map((r: { prefix: string }) => r.prefix).sort(), ['10.77.0.1/32', '10.77.0.2/32']);
    const ready = await fetch(`${api}/readyz`);
    t.equal(ready.status, 200);
    const metrics = await (await fetch(`${api}/metrics`)).text();
    t.match(metrics, /herald_bgp_session_up\{peer="p1"\} 1/);

    // 3. Drain: routes carry GRACEFUL_SHUTDOWN (65535:0), then are withdrawn; undrain brings them back.
    const drained = await cli('drain');
    t.equal(drained.code, 0, drained.err);
    t.ok(await bird.waitFor(
      async () => {
        const rs = await bird.routes('protocol hp1');
        return rs.length === 2 && rs.every((r) => r.communities.includes('65535:0'));
      },
      'routes re-announced with GRACEFUL_SHUTDOWN (65535:0) during the wait time',
      3_000,
      50,
    ), 'GRACEFUL_SHUTDOWN seen in BIRD');
    await bird.waitFor(async () => (await birdRoutes('hp1')).length === 0, 'routes withdrawn after drain', 15_000);
    t.equal((await cli('status', '--json')).out.includes('"drained": true'), true);
    const undrained = await cli('undrain');
    t.equal(undrained.code, 0, undrained.err);
    await bird.waitFor(async () => (await birdRoutes('hp1')).length === 2, 'routes back after undrain', 15_000);

    // 4. Reload by SIGHUP: add p2. p1's session stays up.
    writeFileSync(configPath, stringify(config([peer1, peer2])));
    proc.child?.kill('SIGHUP');
    await bird.waitFor(async () => (await bird.protocol('hp2'))?.bgpState === 'Established', 'hp2 Established after reload', 30_000);
    await bird.waitFor(async () => (await birdRoutes('hp2')).join() === '10.77.0.1/32', 'p2 gets only the route for every peer');
    t.notOk(sinceMoved(since1, (await bird.protocol('hp1'))?.since), 'p1 session untouched by the reload');

    // 5. A bad file is rejected; everything stays.
    writeFileSync(configPath, 'bgp: {localAs: 65000}\npeers: [{name: p1, address: nope, peerAs: 1}]\n');
    proc.child?.kill('SIGHUP');
    await proc.waitFor(() => proc.stdout.includes('new configuration rejected'), 'reload rejected log', 10_000);
    const st = JSON.parse((await cli('status', '--json')).out);
    t.match(st.lastReload, { ok: false, errors: [/peers\[0\]\.address/] });
    t.equal((await bird.protocol('hp2'))?.bgpState, 'Established');

    // 6. Reload by file change: remove p2 → Cease / Peer De-configured; p1 untouched.
    writeFileSync(configPath, stringify(config([peer1])));
    await bird.waitFor(async () => /de-?configured/i.test((await bird.protocol('hp2'))?.lastError ?? ''), 'hp2 got Peer De-configured', 20_000);
    t.equal((await bird.protocol('hp1'))?.bgpState, 'Established');
    t.notOk(sinceMoved(since1, (await bird.protocol('hp1'))?.since), 'p1 session untouched by removing p2');

    // 7. Structured logs of session state changes with reasons.
    const lines = proc.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    t.ok(lines.some((l) => l['peer'] === 'p1' && l['to'] === 'Established' && typeof l['reason'] === 'string'), 'state change logged with reason');

    // 8. SIGTERM: graceful shutdown, Cease / Administrative Shutdown, exit 0.
    proc.child?.kill('SIGTERM');
    await bird.waitFor(async () => /shutdown/i.test((await bird.protocol('hp1'))?.lastError ?? ''), 'hp1 got Administrative Shutdown', 20_000);
    await proc.waitFor(() => !proc.alive || undefined, 'herald exit', 15_000).catch(() => undefined);
    t.equal(proc.child?.exitCode, 0);
  });

  t.test('herald run with a manifests source: Service VIPs announced only while this node can serve them', { timeout: 60_000 }, async (t) => {
    const addr = loopbackPair();
    const [birdPort, ourPort, adminPort] = [await freePort(addr.bird), await freePort(addr.ours), await freePort('127.0.0.1')];
    const bird = await Bird.start(bgpProtocol({ name: 'hk', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.ours, neighborPort: ourPort, neighborAs: 65000, passive: true, families: ['ipv4'] }));
    t.teardown(() => bird.stop());
    const proc = new DaemonProcess('daemon-bird-k8s');
    t.teardown(() => proc.stop(15_000));
    const manifests = join(proc.dir, 'manifests');
    mkdirSync(manifests);
    const nodeYaml = 'apiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {}}\nstatus: {conditions: [{type: Ready, status: "True"}]}\n';
    const svcYaml =
      'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n' +
      'spec: {type: LoadBalancer, clusterIP: 10.96.0.10, clusterIPs: [10.96.0.10], externalTrafficPolicy: Local}\n' +
      'status: {loadBalancer: {ingress: [{ip: 10.88.0.1}]}}\n';
    const slice = (nodeName: string) =>
      'apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}\n' +
      `addressType: IPv4\nendpoints: [{addresses: [10.1.0.5], nodeName: ${nodeName}, conditions: {ready: true}}]\n`;
    writeFileSync(join(manifests, 'node.yaml'), nodeYaml);
    writeFileSync(join(manifests, 'svc.yaml'), svcYaml);
    writeFileSync(join(manifests, 'slice.yaml'), slice('node-a'));
    const configPath = join(proc.dir, 'herald.yaml');
    writeFileSync(
      configPath,
      stringify({
        bgp: { localAs: 65000, routerId: '10.0.0.1' },
        allowedPrefixes: ['10.88.0.0/24'],
        peers: [{ name: 'k', address: addr.bird, port: birdPort, peerAs: 65001, localAddress: addr.ours, connectRetryTime: 1, families: ['ipv4-unicast'] }],
        source: { manifests },
        node: { name: 'node-a' },
        admin: { address: '127.0.0.1', port: adminPort },
        stateDir: join(proc.dir, 'state'),
      }),
    );
    proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
    t.teardown(() => {
      if (!t.passing()) t.comment(`herald stdout (tail):\n${proc.stdout.slice(-4000)}\nherald stderr:\n${proc.stderr.slice(-2000)}`);
    });
    const api = `http://127.0.0.1:${adminPort}`;
    await proc.waitFor(async () => (await fetch(`${api}/readyz`).catch(() => undefined))?.status === 200, 'ready (source synced)', 20_000);
    await bird.waitFor(async () => (await bird.routes('protocol hk')).some((r) => r.prefix === '10.88.0.1/32'), 'VIP announced', 30_000);
    const svc = (await (await fetch(`${api}/api/v1/services/default/web`)).json()) as { vips: { address: string; announced: boolean; reasons: { code: string }[] }[] };
    t.match(svc.vips.find((v) => v.address === '10.88.0.1'), { announced: true, reasons: [{ code: 'LocalReadyEndpoint' }] });
    // The endpoint moves to another node: externalTrafficPolicy Local → withdrawn here, with the reason.
    writeFileSync(join(manifests, 'slice.yaml'), slice('node-b'));
    await bird.waitFor(async () => !(await bird.routes('protocol hk')).some((r) => r.prefix === '10.88.0.1/32'), 'VIP withdrawn', 30_000);
    const after = (await (await fetch(`${api}/api/v1/services/default/web`)).json()) as { vips: { address: string; announced: boolean; reasons: { code: string }[] }[] };
    t.match(after.vips.find((v) => v.address === '10.88.0.1'), { announced: false, reasons: [{ code: 'NoLocalReadyEndpoint' }] });
  });

  t.test('stateDir: a restart within restartTime sets the Graceful Restart R bit (RFC 4724 §3), a first start does not', { timeout: 60_000 }, async (t) => {
    const addr = loopbackPair();
    const [birdPort, adminPort] = [await freePort(addr.bird), await freePort('127.0.0.1')];
    const bird = await Bird.start(bgpProtocol({ name: 'hg', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.ours, neighborPort: 1, neighborAs: 65000, passive: true, families: ['ipv4'], extra: '  graceful restart on;' }));
    t.teardown(() => bird.stop());
    const first = new DaemonProcess('daemon-bird-gr');
    t.teardown(() => first.stop(15_000));
    const configPath = join(first.dir, 'herald.yaml');
    writeFileSync(
      configPath,
      stringify({
        bgp: { localAs: 65000, routerId: '10.0.0.1' },
        peers: [{ name: 'g', address: addr.bird, port: birdPort, peerAs: 65001, localAddress: addr.ours, connectRetryTime: 1, families: ['ipv4-unicast'], gracefulRestart: { enabled: true, restartTime: 60 } }],
        routes: [{ prefix: '10.99.0.1/32' }],
        admin: { address: '127.0.0.1', port: adminPort },
        stateDir: join(first.dir, 'state'),
      }),
    );
    const neighborGr = async () => {
      const raw = (await bird.protocol('hg'))?.raw ?? '';
      const caps = raw.split('Neighbor capabilities')[1] ?? '';
      return { restartTime: /Restart time: (\d+)/.exec(caps)?.[1], recovery: /Restart recovery/.test(caps) };
    };
    first.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
    await bird.waitFor(async () => (await bird.protocol('hg'))?.bgpState === 'Established', 'first session', 30_000);
    t.same(await neighborGr(), { restartTime: '60', recovery: false }, 'first start: no R bit');
    await bird.waitFor(async () => (await bird.routes('protocol hg')).some((r) => r.prefix === '10.99.0.1/32'), 'route from the first run');
    first.child?.kill('SIGTERM');
    await new Promise((resolve) => (first.alive ? first.child?.once('exit', resolve) : resolve(undefined)));
    const second = new DaemonProcess('daemon-bird-gr2');
    t.teardown(() => second.stop(15_000));
    second.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
    await bird.waitFor(async () => (await bird.protocol('hg'))?.bgpState === 'Established', 'second session', 30_000);
    t.same(await neighborGr(), { restartTime: '60', recovery: true }, 'restart within the window: R bit set');
    await bird.waitFor(async () => (await bird.routes('protocol hg')).some((r) => r.prefix === '10.99.0.1/32'), 'route from the second run');
  });

  t.test('health-checked static route: announced after its TCP check passes, withdrawn when it fails', { timeout: 60_000 }, async (t) => {
    const { createServer } = await import('node:net');
    const addr = loopbackPair();
    const [birdPort, adminPort, checkPort] = [await freePort(addr.bird), await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    const bird = await Bird.start(bgpProtocol({ name: 'hh', local: addr.bird, localPort: birdPort, localAs: 65001, neighbor: addr.ours, neighborPort: 1, neighborAs: 65000, passive: true, families: ['ipv4'] }));
    t.teardown(() => bird.stop());
    const proc = new DaemonProcess('daemon-bird-hc');
    t.teardown(() => proc.stop(15_000));
    const configPath = join(proc.dir, 'herald.yaml');
    writeFileSync(
      configPath,
      stringify({
        bgp: { localAs: 65000, routerId: '10.0.0.1' },
        peers: [{ name: 'h', address: addr.bird, port: birdPort, peerAs: 65001, localAddress: addr.ours, connectRetryTime: 1, families: ['ipv4-unicast'] }],
        routes: [{ prefix: '10.66.0.1/32', healthCheck: { kind: 'tcp', host: '127.0.0.1', port: checkPort } }, { prefix: '10.66.0.2/32' }],
        healthChecks: { interval: 0.2, timeout: 0.2, rise: 2, fall: 2 },
        admin: { address: '127.0.0.1', port: adminPort },
        stateDir: join(proc.dir, 'state'),
      }),
    );
    proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath]);
    const api = `http://127.0.0.1:${adminPort}`;
    const prefixes = async () => (await bird.routes('protocol hh')).map((r) => r.prefix).sort();
    await bird.waitFor(async () => (await prefixes()).includes('10.66.0.2/32'), 'unchecked route announced', 30_000);
    t.notOk((await prefixes()).includes('10.66.0.1/32'), 'checked route not announced while nothing listens');
    const health = async () => (await (await fetch(`${api}/api/v1/health`)).json()) as { gate: string; state: string; lastFailure?: { code: string } }[];
    // The first probe may not have finished when the unchecked route arrives: wait for a failure to be recorded.
    await bird.waitFor(async () => ((await health()).find((c) => c.gate === 'route:10.66.0.1/32')?.lastFailure ? true : undefined), 'first probe failure recorded', 30_000);
    t.match((await health()).find((c) => c.gate === 'route:10.66.0.1/32'), { lastFailure: { code: 'ConnectionRefused' } });
    const srv = createServer((sock) => sock.destroy());
    await new Promise<void>((resolve) => srv.listen(checkPort, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
    await bird.waitFor(async () => (await prefixes()).includes('10.66.0.1/32'), 'checked route announced once the check passes', 20_000);
    t.equal((await health()).find((c) => c.gate === 'route:10.66.0.1/32')?.state, 'up');
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    await bird.waitFor(async () => !(await prefixes()).includes('10.66.0.1/32'), 'checked route withdrawn once the check fails', 20_000);
    t.same(await prefixes(), ['10.66.0.2/32']);
  });
}
