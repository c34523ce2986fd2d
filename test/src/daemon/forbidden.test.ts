// `herald run` against the fake apiserver refusing calls with 403 (RBAC): the status names each refused call with the
// apiserver's message (status.forbidden), a refused list keeps the source unsynced with the reason in notReady, the
// log warns, and everything clears once the calls are allowed again.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { StatusView } from '../../../src/admin/view.ts';
import { formatStatus } from '../../../src/cli/table.ts';
import { runDaemon } from '../../../src/daemon/run.ts';
import { freePort } from '../../helpers/bird.ts';
import { FakeApiServer } from '../../helpers/fake-apiserver.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';
import { writeKubeconfig } from '../../e2e/harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-forbidden-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

type Status = StatusView;

t.test('403 on a watched resource and on Events: named in status, notReady and the log; cleared when allowed', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.upsert('nodes', node('node-a'));
  api.upsert('services', service('web', { etp: 'Cluster', lbIPs: ['198.51.100.7'] }));
  api.upsert('endpointslices', slice('web-1', 'web', [['10.1.0.1', 'node-b', { ready: true }]]), 'discovery.k8s.io');
  api.failResource('endpointslices', 403);
  api.failResource('events', 403);

  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), api.url);
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: 65000, routerId: '10.0.0.1' },
      node: { name: 'node-a', ip: '127.0.0.1' },
      source: { kubernetes: { kubeconfig } },
      kubeProxy: { enabled: false },
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(dir, 'state'),
      logLevel: 'info',
    }),
  );
  const lines: Record<string, unknown>[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: {}, stopSignal, watchIntervalMs: 0, logStream: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  t.teardown(async () => {
    stop();
    await running;
  });
  const status = async (): Promise<Status | undefined> => {
    try {
      return (await (await fetch(`http://127.0.0.1:${adminPort}/api/v1/status`)).json()) as Status;
    } catch {
      return undefined;
    }
  };
  const waitStatus = async (pred: (s: Status) => boolean, what: string): Promise<Status> => {
    const deadline = Date.now() + 30_000;
    let last: Status | undefined;
    while (Date.now() < deadline) {
      last = await status();
      if (last && pred(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what}: last status ${JSON.stringify(last)}`);
  };

  // the speaker thread binds the BGP listener a moment after the admin API answers; the initial read is a streaming
  // list (a watch), so the refused verb is watch
  const s = await waitStatus((x) => (x.forbidden ?? []).some((f) => f.startsWith('watch endpointslices')) && !x.notReady.includes('BGP listener not bound yet'), 'EndpointSlice 403 in status');
  t.equal(s.ready, false);
  t.match(s.notReady, [/^kubernetes source not synced \(EndpointSlice: watch endpointslices: HTTP 403: /]);
  t.match(s.forbidden, [/^watch endpointslices: HTTP 403: /]);
  t.ok(lines.some((l) => l['msg'] === 'source error' && l['level'] === 40 && /403/.test(JSON.stringify(l['err']))), 'the log warns with the 403');

  // Allowed again: the source syncs; a Service announced afterwards gets an Event (the first result posts none),
  // which is refused.
  api.failResource('endpointslices', undefined);
  await waitStatus((x) => x.ready, 'ready once EndpointSlices are allowed');
  api.upsert('services', service('web2', { etp: 'Cluster', lbIPs: ['198.51.100.8'] }));
  api.upsert('endpointslices', slice('web2-1', 'web2', [['10.1.0.2', 'node-b', { ready: true }]]), 'discovery.k8s.io');
  const s2 = await waitStatus((x) => x.ready && (x.forbidden ?? []).some((f) => f.startsWith('create events')), 'ready, Events 403 in status');
  t.notOk((s2.forbidden ?? []).some((f) => f.startsWith('watch endpointslices')), 'the EndpointSlice entry is gone');
  t.match(s2.forbidden, [/^create events: HTTP 403: /]);
  t.match(formatStatus(s2), /^Forbidden: +create events: HTTP 403: /m, '`herald status` shows it');
  t.ok(lines.some((l) => l['level'] === 40 && l['call'] === 'create events' && /RBAC/.test(String(l['msg']))), 'warned: create events forbidden');
  const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  t.match(metrics, /^herald_kubernetes_events_dropped_total\{component="herald",reason="sendFailed"\} [1-9]/m, 'the refused Event is counted as lost');
  t.match(metrics, /^herald_kubernetes_watch_last_connect_timestamp_seconds\{resource="EndpointSlice"\} \d/m, 'the EndpointSlice watch opened once allowed');

  // Events allowed again: the next Event succeeds and the entry goes.
  api.failResource('events', undefined);
  api.upsert('services', service('web3', { etp: 'Cluster', lbIPs: ['198.51.100.9'] }));
  api.upsert('endpointslices', slice('web3-1', 'web3', [['10.1.0.3', 'node-b', { ready: true }]]), 'discovery.k8s.io');
  const s3 = await waitStatus((x) => x.forbidden === undefined, 'no forbidden call left');
  t.equal(s3.ready, true);
  t.ok(api.list('events').length > 0, 'the Event was written');
});
