// End to end, health checks and flap control (docs/health-checks.md): two `herald run` processes (node-a, node-b on
// their own 127.x node IPs) read ONE manifest directory (standalone source, `kubeProxy.enabled: true`) holding a
// LoadBalancer Service with externalTrafficPolicy Local and a healthCheckNodePort, and peer over eBGP with ONE real
// BIRD 2. Each node has its own fake kube-proxy Service health server on the healthCheckNodePort (switchable: 200,
// 503, stopped, hanging) and a separate, always-healthy fake kube-proxy /healthz on another port, so that a refused
// or hanging Service health port is not confused with a node-level failure.
//
// Timing: healthChecks interval 0.3 s, timeout 0.25 s, fall 2, rise 2; flapControl holdDown 1 s, damping on with a
// short half-life (5 s) so a flapping VIP is suppressed within a few cycles and released within ~10 s.
//
// node-a: (a) 503 → its path leaves BIRD, the API says HealthCheckFailing / NoLocalEndpoints; (b) 200 → back after
// rise and the hold-down; (c) kube-proxy stopped → withdrawn, ConnectionRefused; back; kube-proxy hanging → Timeout.
// node-b: (d) 503/200 alternating → Suppressed with a time left; BIRD does not see the path while suppressed, and it
// comes back once the suppression ends. Measured durations are printed as comments (no timing assertions).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { birdAvailable, freePort } from '../helpers/bird.ts';
import { DaemonProcess } from '../helpers/daemon-process.ts';
import { startFakeKubeProxy } from '../helpers/fake-kube-proxy.ts';
import { node, service, slice } from '../helpers/k8s-objects.ts';
import { ROOT, adminJson, heraldLogs, loopbackBlock, pathsFor, protoName, sleep, startBird, startKubeProxies, waitHeraldUp, withLogs, manifestsDir } from './harness.ts';
import type { HeraldNode, NodeSpec } from './harness.ts';
import { missingPrerequisite } from '../helpers/prereq.ts';

const VIP = '198.51.100.30';
const PREFIX = `${VIP}/32`;
const HERALD_AS = 65000;
const BIRD_AS = 65100;
const SVC = 'default/web';

/** The reasons of the VIP on one node, as `GET /api/v1/services/default/web` reports them. */
interface VipReasons {
  announced: boolean;
  reasons: { code: string; message: string }[];
}

/** One entry of `GET /api/v1/health` (the fields used here). */
interface CheckView {
  kind: string;
  gate: string;
  state: string;
  lastFailure?: { code: string; message: string };
}

/**
 * True when the VIP is withheld because of damping: a `Suppressed` reason, or (as the Service view folds the flap gate
 * into the health gate) a HealthCheckFailing reason whose message says "suppressed".
 */
function isSuppressed(v: VipReasons): boolean {
  return !v.announced && v.reasons.some((r) => r.code === 'Suppressed' || (r.code === 'HealthCheckFailing' && /suppressed/i.test(r.message)));
}

async function vipView(h: HeraldNode): Promise<VipReasons | undefined> {
  const v = (await adminJson(h.adminPort, `/api/v1/services/${SVC}`)) as { vips?: (VipReasons & { address: string })[] } | undefined;
  return v?.vips?.find((x) => x.address === VIP);
}

/** `herald run` with the timing of this test (the shared startHerald uses rise 1 / fall 1 and no flap control). */
async function startHealthHerald(o: { node: NodeSpec; bird: { ip: string; port: number }; manifests: string; healthzPort: number }): Promise<HeraldNode> {
  const proc = new DaemonProcess(`e2e-health-${o.node.name}`);
  const adminPort = await freePort('127.0.0.1');
  const config = {
    bgp: { localAs: HERALD_AS },
    peers: [
      {
        name: 'bird',
        address: o.bird.ip,
        port: o.bird.port,
        peerAs: BIRD_AS,
        localAddress: o.node.ip,
        holdTime: 30,
        connectRetryTime: 1,
        ebgpMultihop: 2,
        families: ['ipv4-unicast'],
      },
    ],
    source: { manifests: o.manifests },
    allowedPrefixes: [PREFIX],
    kubeProxy: { enabled: true, healthzPort: o.healthzPort, checkServices: true },
    healthChecks: { interval: 0.3, timeout: 0.25, rise: 2, fall: 2 },
    flapControl: { holdDown: 1, penalty: 1000, suppressThreshold: 2000, reuseThreshold: 750, halfLife: 5, maxSuppress: 12 },
    admin: { address: '127.0.0.1', port: adminPort },
    stateDir: join(proc.dir, 'state'),
    logLevel: 'info',
  };
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(configPath, stringify(config));
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', o.node.name, '--node-ip', o.node.ip]);
  return { proc, adminPort };
}

if (!missingPrerequisite({ bird2: birdAvailable() })) {
  t.setTimeout(270000);
  t.test('health checks withdraw and re-announce a VIP in BIRD; reasons; flap suppression', { timeout: 240_000 }, async (t) => {
    const block = loopbackBlock();
    const nodes: NodeSpec[] = [
      { name: 'node-a', ip: `${block}1` },
      { name: 'node-b', ip: `${block}2` },
    ];
    const [A, B] = nodes.map((n) => protoName(n.name)) as [string, string];
    const names = nodes.map((n) => n.name);
    const birdIp = `${block}100`;
    const birdPort = await freePort(birdIp);
    const { manifests, put } = manifestsDir(t, 'health');

    // Service health servers (healthCheckNodePort) and node /healthz servers, one of each per node IP.
    const svcKp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => svcKp.close());
    const nodeKp = await startKubeProxies(nodes.map((n) => n.ip));
    t.teardown(() => nodeKp.close());
    const kpA = () => svcKp.proxies.get(nodes[0]!.ip)!;
    const kpB = () => svcKp.proxies.get(nodes[1]!.ip)!;

    const svc = service('web', { etp: 'Local', lbIPs: [VIP] });
    svc.spec!.healthCheckNodePort = svcKp.port;
    put('nodes.yaml', nodes.map((n) => node(n.name)));
    put('web.yaml', [
      svc,
      slice('web-1', 'web', [
        ['10.3.0.1', 'node-a', { ready: true }],
        ['10.3.0.2', 'node-b', { ready: true }],
      ]),
    ]);

    const bird = await startBird({ ip: birdIp, port: birdPort, birdAs: BIRD_AS, heraldAs: HERALD_AS, nodes });
    t.teardown(() => bird.stop());
    const heralds: HeraldNode[] = [];
    for (const n of nodes) {
      const h = await startHealthHerald({ node: n, bird: { ip: birdIp, port: birdPort }, manifests, healthzPort: nodeKp.port });
      t.teardown(() => h.proc.stop(5000));
      heralds.push(h);
    }
    const [hA, hB] = heralds as [HeraldNode, HeraldNode];
    const paths = () => pathsFor(bird, PREFIX);
    /** Polls BIRD every 50 ms until the paths are `want`; returns the ms it took. */
    const waitPaths = async (want: string[], what: string, timeoutMs = 20_000): Promise<number> => {
      const t0 = performance.now();
      await withLogs(() => bird.waitFor(async () => (await paths()).join() === want.join() || undefined, `${what}: paths ${want.join(',') || '(none)'}`, timeoutMs, 50), heralds, names);
      const ms = performance.now() - t0;
      t.same(await paths(), want, what);
      return ms;
    };
    /**
     * Waits until node `h` withholds the VIP with a HealthCheckFailing reason AND its kube-proxy Service check's last
     * failure (`GET /api/v1/health`) has the code `code`; returns both.
     */
    const waitReason = async (h: HeraldNode, code: string, what: string, timeoutMs = 10_000) => {
      let last: { vip: VipReasons | undefined; check: CheckView | undefined } = { vip: undefined, check: undefined };
      try {
        return await h.proc.waitFor(
          async () => {
            const vip = await vipView(h);
            const checks = (await adminJson(h.adminPort, '/api/v1/health')) as CheckView[] | undefined;
            const check = checks?.find((c) => c.kind === 'kube-proxy-service' && c.gate.includes(VIP));
            last = { vip, check };
            if (vip === undefined || check === undefined || vip.announced || check.lastFailure?.code !== code) return undefined;
            return vip.reasons.some((r) => r.code === 'HealthCheckFailing') ? { vip, check } : undefined;
          },
          what,
          timeoutMs,
          50,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last views: ${JSON.stringify(last)}`, { cause: err });
      }
    };

    // Sessions up; the VIP from both nodes once their checks passed `rise` times.
    for (const h of heralds) await waitHeraldUp(h);
    for (const p of [A, B]) await withLogs(() => bird.waitFor(async () => (await bird.protocol(p))?.bgpState === 'Established' || undefined, `${p} Established`, 40_000), heralds, names);
    await waitPaths([A, B], 'both nodes healthy: both paths', 30_000);
    t.ok(kpA().requests > 0 && kpB().requests > 0, 'both nodes probed their kube-proxy Service health port');

    // (a) 503 on node-a → node-a's path leaves BIRD; the reason names the 503 detail.
    kpA().setMode('none');
    const downMs = await waitPaths([B], '(a) node-a kube-proxy 503: node-a withdrawn');
    t.comment(`(a) 503 → path gone from BIRD in ${downMs.toFixed(0)} ms (interval 0.3 s × fall 2 = 0.6 s of checking, plus BIRD polling at 50 ms)`);
    const a = await waitReason(hA, 'NoLocalEndpoints', 'node-a: HealthCheckFailing, check failure NoLocalEndpoints');
    t.equal(a.vip.reasons[0]?.code, 'HealthCheckFailing', '(a) the VIP reason is HealthCheckFailing');
    t.match(a.vip.reasons[0]?.message, /HTTP 503, localEndpoints 0/, '(a) the reason message carries the 503 detail');
    t.equal(a.check.lastFailure?.code, 'NoLocalEndpoints', '(a) the check failed with NoLocalEndpoints');
    t.equal(a.check.state, 'down', '(a) the check is down');
    t.comment(`(a) node-a reason: ${a.vip.reasons[0]?.code}: ${a.vip.reasons[0]?.message}`);
    t.ok((await vipView(hB))?.announced, 'node-b still announces');

    // (b) 200 again → back after rise (2 × 0.3 s) and the 1 s hold-down.
    kpA().setMode('ok');
    const upMs = await waitPaths([A, B], '(b) node-a kube-proxy 200 again: node-a back');
    t.comment(`(b) 200 → path back in BIRD in ${upMs.toFixed(0)} ms (rise 2 × 0.3 s, hold-down 1 s from the withdrawal)`);
    t.ok((await vipView(hA))?.announced, '(b) node-a announces again');
    await sleep(4000); // let the damping penalty of the withdrawal decay (half-life 5 s) before the next withdrawal

    // (c1) node-a's Service health server stopped: connection refused → withdrawn, reported as ConnectionRefused.
    await kpA().close();
    const refusedMs = await waitPaths([B], '(c) node-a kube-proxy stopped: node-a withdrawn');
    t.comment(`(c) refused → path gone in ${refusedMs.toFixed(0)} ms`);
    const c = await waitReason(hA, 'ConnectionRefused', 'node-a: HealthCheckFailing, check failure ConnectionRefused');
    t.equal(c.vip.reasons[0]?.code, 'HealthCheckFailing', '(c) the VIP reason is HealthCheckFailing');
    t.equal(c.check.lastFailure?.code, 'ConnectionRefused', '(c) refused is reported as ConnectionRefused');
    t.match(c.vip.reasons[0]?.message, /refused/i, '(c) the reason message says refused');
    t.notMatch(c.vip.reasons[0]?.message, /503|localEndpoints|no (local )?endpoints/i, '(c) refused is not reported as "no endpoints"');
    t.comment(`(c) node-a reason: ${c.vip.reasons[0]?.code}: ${c.vip.reasons[0]?.message}`);

    // Bring node-a's health server back on the same address and port.
    const again = await startFakeKubeProxy({ host: nodes[0]!.ip, port: svcKp.port });
    svcKp.proxies.set(nodes[0]!.ip, again);
    await waitPaths([A, B], '(c) node-a kube-proxy back: node-a announced again');
    await sleep(4000);

    // (c2) hanging answer → Timeout.
    kpA().setMode('hang');
    const hangMs = await waitPaths([B], '(c) node-a kube-proxy hanging: node-a withdrawn');
    t.comment(`(c) hanging → path gone in ${hangMs.toFixed(0)} ms (timeout 0.25 s per probe)`);
    const h = await waitReason(hA, 'Timeout', 'node-a: HealthCheckFailing, check failure Timeout');
    t.equal(h.vip.reasons[0]?.code, 'HealthCheckFailing', '(c) the VIP reason is HealthCheckFailing');
    t.equal(h.check.lastFailure?.code, 'Timeout', '(c) a hanging answer is reported as Timeout');
    t.notMatch(h.vip.reasons[0]?.message, /refused|503|localEndpoints/i, '(c) Timeout is not confused with refused or 503');
    t.comment(`(c) node-a reason: ${h.vip.reasons[0]?.code}: ${h.vip.reasons[0]?.message}`);

    // (d) node-b flaps: 503/200 alternating, each long enough to withdraw and re-announce, until it is suppressed.
    let cycles = 0;
    let suppressed: VipReasons | undefined;
    for (; cycles < 8 && suppressed === undefined; cycles++) {
      kpB().setMode('none');
      await waitPaths([], `(d) flap ${cycles + 1}: node-b withdrawn`);
      kpB().setMode('ok');
      // Either the path comes back (not suppressed yet) or the API says Suppressed.
      suppressed = await withLogs(
        () =>
          hB.proc.waitFor(
            async () => {
              const v = await vipView(hB);
              if (v !== undefined && !v.announced && isSuppressed(v)) return v;
              if ((await paths()).includes(B)) return { announced: true, reasons: [] } as VipReasons;
              return undefined;
            },
            `(d) flap ${cycles + 1}: node-b back or suppressed`,
            20_000,
            50,
          ),
        heralds,
        names,
      );
      if (suppressed.announced) suppressed = undefined;
    }
    t.ok(suppressed, `(d) node-b suppressed after ${cycles} withdrawals`);
    if (suppressed !== undefined) {
      const r = suppressed.reasons.find((x) => x.code === 'Suppressed' || /suppressed/i.test(x.message))!;
      t.comment(`(d) node-b reason: ${r.code}: ${r.message}`);
      t.match(r.message, /suppressed after \d+ withdrawals/, '(d) the reason says why');
      const left = /([\d.]+) s left/.exec(r.message);
      t.ok(left, `(d) the reason gives the time left: ${r.message}`);
      const leftMs = Number(left?.[1] ?? 0) * 1000;
      t.ok(leftMs > 0, '(d) time left is positive');
      // While the API says Suppressed, BIRD must not have node-b's path, although its check passes.
      const suppressedAt = performance.now();
      let samples = 0;
      let upWhileSuppressed = 0;
      for (;;) {
        const v = await vipView(hB);
        if (v === undefined || !isSuppressed(v)) break;
        const checks = (await adminJson(hB.adminPort, '/api/v1/health')) as CheckView[] | undefined;
        if (checks?.find((c) => c.kind === 'kube-proxy-service' && c.gate.includes(VIP))?.state === 'up') upWhileSuppressed++;
        const p = await paths();
        if (p.includes(B)) {
          // Boundary: the suppression may end between reading the view and reading BIRD (the view's "s left" text is
          // from when the decision was computed). Seen twice: the re-read view then says announced. Only a view that
          // still says Suppressed after BIRD showed the path is a violation.
          const after = await vipView(hB);
          if (after === undefined || !isSuppressed(after)) break;
          const routes = JSON.stringify(await adminJson(hB.adminPort, '/api/v1/routes'));
          const again = JSON.stringify(after);
          const dampers = JSON.stringify(((await adminJson(hB.adminPort, '/api/v1/status')) as { health?: { dampers?: unknown } } | undefined)?.health?.dampers);
          t.fail(`(d) BIRD has node-b's path while the API says Suppressed: ${JSON.stringify(v)}; node-b routes ${routes}; view again ${again}; dampers ${dampers}\n${heraldLogs([hB], ['node-b'], 40)}`);
          break;
        }
        samples++;
        if (performance.now() - suppressedAt > 30_000) {
          t.fail('(d) still suppressed after 30 s');
          break;
        }
        await sleep(200);
      }
      t.ok(samples > 3, `(d) BIRD had no node-b path in ${samples} samples while suppressed`);
      t.ok(upWhileSuppressed > 0, `(d) the check was up (passing) in ${upWhileSuppressed} of those samples: the path was held back by damping alone`);
      const backMs = await waitPaths([B], '(d) suppression over: node-b back', 20_000);
      const totalMs = performance.now() - suppressedAt;
      t.comment(`(d) suppressed after ${cycles} withdrawals with ${(leftMs / 1000).toFixed(1)} s left; path back ${(totalMs / 1000).toFixed(1)} s after the first Suppressed view (${backMs.toFixed(0)} ms after the API stopped saying Suppressed)`);
    }
    for (const hh of heralds) t.ok(hh.proc.alive, 'herald still running');
  });
}
