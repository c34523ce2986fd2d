// HealthManager with real probes against fake kube-proxy servers on loopback, real clock.
// Logical assertions only: wait (bounded) for state changes, never assert durations.
import t from 'tap';
import { HealthManager } from '../../../src/health/manager.ts';
import { kubeProxyNodeCheck, kubeProxyServiceCheck } from '../../../src/health/specs.ts';
import type { CheckTiming } from '../../../src/health/types.ts';
import { refusedPort, startFakeKubeProxy } from '../../helpers/fake-kube-proxy.ts';

// Generous timeout so that a loaded machine does not turn answers into Timeouts.
const FAST: CheckTiming = { intervalSec: 0.03, timeoutSec: 5, rise: 1, fall: 1 };

async function waitFor(what: string, pred: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('refused, 503 and hang are reported distinctly', async (t) => {
  const none = await startFakeKubeProxy({ mode: 'none' });
  const hang = await startFakeKubeProxy({ mode: 'hang' });
  const ok = await startFakeKubeProxy();
  const refused = await refusedPort();
  const hm = new HealthManager({ flapControl: { holdDownSec: 0 } });
  t.teardown(async () => {
    await hm.close();
    await Promise.all([none.close(), hang.close(), ok.close()]);
  });
  const timing = { ...FAST, fall: 2 };
  hm.setChecks([
    kubeProxyServiceCheck({ gate: 'vip-refused', nodeIP: '127.0.0.1', healthCheckNodePort: refused, timing }),
    kubeProxyServiceCheck({ gate: 'vip-none', nodeIP: none.host, healthCheckNodePort: none.port, timing }),
    kubeProxyServiceCheck({ gate: 'vip-hang', nodeIP: hang.host, healthCheckNodePort: hang.port, timing: { ...timing, timeoutSec: 0.2 } }),
    kubeProxyServiceCheck({ gate: 'vip-ok', nodeIP: ok.host, healthCheckNodePort: ok.port, timing }),
  ]);
  const state = (k: string) => hm.status().checks.find((c) => c.gate === k)?.state;
  await waitFor('all checks decided', () => ['vip-refused', 'vip-none', 'vip-hang'].every((k) => state(k) === 'down') && state('vip-ok') === 'up');
  t.same(hm.gate('vip-refused').reasons.map((r) => r.code), ['ConnectionRefused']);
  t.same(hm.gate('vip-none').reasons.map((r) => r.code), ['NoLocalEndpoints']);
  t.match(hm.gate('vip-none').reasons[0]?.message, /HTTP 503, localEndpoints 0/);
  t.same(hm.gate('vip-hang').reasons.map((r) => r.code), ['Timeout']);
  t.same(hm.gate('vip-ok'), { pass: true, reasons: [] });
  const st = hm.status().checks.find((c) => c.gate === 'vip-ok');
  t.equal(st?.lastResult?.localEndpoints, 1);
  t.equal(typeof st?.latencyMs, 'number');
});

t.test('node /healthz failing withdraws everything', async (t) => {
  const kp = await startFakeKubeProxy();
  const hm = new HealthManager({ flapControl: { holdDownSec: 0 } });
  t.teardown(async () => {
    await hm.close();
    await kp.close();
  });
  hm.setChecks([kubeProxyNodeCheck({ nodeIPs: kp.host, port: kp.port, timing: FAST })]);
  await waitFor('node check up', () => hm.nodeGate().pass);
  t.equal(hm.gate('any-vip').pass, true);
  let nodeLevel = false;
  hm.on('change', (_keys, info) => {
    if (info.nodeLevel) nodeLevel = true;
  });
  kp.setMode('not-eligible');
  await waitFor('node check down', () => !hm.nodeGate().pass);
  const g = hm.gate('any-vip');
  t.equal(g.pass, false);
  t.equal(g.reasons[0]?.code, 'NodeUnhealthy');
  t.match(g.reasons[0]?.message, /NodeNotEligible/);
  t.ok(nodeLevel, 'node-level change event');
});

t.test('a flapping endpoint gets suppressed', async (t) => {
  const kp = await startFakeKubeProxy();
  const hm = new HealthManager({
    flapControl: { holdDownSec: 0.05, penalty: 1000, suppressThreshold: 2000, reuseThreshold: 750, halfLifeSec: 60, maxSuppressSec: 120 },
  });
  const timers: { toggler?: ReturnType<typeof setInterval> } = {};
  t.teardown(async () => {
    clearInterval(timers.toggler);
    await hm.close();
    await kp.close();
  });
  const vip = '192.0.2.10';
  // A minimal reconciler: announce exactly when the gate passes, report it back.
  let announcements = 0;
  let withdrawals = 0;
  let announced = false;
  const reconcile = () => {
    const want = hm.gate(vip).pass;
    if (want !== announced) {
      announced = want;
      if (want) announcements++;
      else withdrawals++;
      hm.setAnnounced(vip, want);
    }
  };
  hm.on('change', reconcile);
  hm.setChecks([kubeProxyServiceCheck({ gate: vip, nodeIP: kp.host, healthCheckNodePort: kp.port, timing: FAST })]);
  await waitFor('first announcement', () => announced);
  // Flap the endpoint: kube-proxy alternates between local endpoints and none.
  timers.toggler = setInterval(() => kp.setMode(kp.mode === 'ok' ? 'none' : 'ok'), 150);
  await waitFor('suppression', () => hm.gate(vip).reasons.some((r) => r.code === 'Suppressed'));
  clearInterval(timers.toggler);
  kp.setMode('ok');
  const g = hm.gate(vip);
  t.equal(g.pass, false, 'suppressed VIP may not be announced');
  const s = g.reasons.find((r) => r.code === 'Suppressed');
  t.ok((s?.until ?? 0) > Date.now(), 'suppression has an end in the future');
  t.match(s?.message, /suppressed after 3 withdrawals/);
  t.equal(withdrawals, 3, 'suppressed at the third withdrawal');
  t.equal(announced, false);
  // The check itself recovers, but the VIP stays suppressed.
  await waitFor('check up again', () => hm.status().checks[0]?.state === 'up' && (hm.status().checks[0]?.consecutiveOk ?? 0) >= 3);
  reconcile();
  t.equal(announced, false, 'still not announced while suppressed');
  t.equal(announcements, 3);
  const d = hm.status().dampers.find((x) => x.key === vip);
  t.equal(d?.suppressed, true);
  t.equal(d?.withdrawals, 3);
});
