// Metrics: every documented metric exists, the exposition text parses (promtool rules), and
// message counters stay monotonic across session restarts.
import t from 'tap';
import type { PeerView } from '../../../src/admin/view.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { handledVips, refusedInputs } from '../../../src/daemon/admin-view.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict parser of the Prometheus text format 0.0.4 (enough of promtool's checks to catch mistakes). */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('exposition must end with a newline');
  for (const line of lines.slice(0, -1)) {
    let m: RegExpExecArray | null;
    if (line === '') continue; // empty lines are ignored by the format
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line))) {
      if (helps.has(m[1]!)) throw new Error(`duplicate HELP ${m[1]}`);
      helps.add(m[1]!);
    } else if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      if (types.has(m[1]!)) throw new Error(`duplicate TYPE ${m[1]}`);
      types.set(m[1]!, m[2]!);
    } else if ((m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-]?[Ii]nf)$/.exec(line))) {
      const labels: Record<string, string> = {};
      if (m[3]) {
        const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
        let consumed = 0;
        for (const lm of m[3].matchAll(re)) {
          labels[lm[1]!] = lm[2]!;
          consumed += lm[0].length;
        }
        if (consumed !== m[3].length) throw new Error(`bad labels: ${line}`);
      }
      samples.push({ name: m[1]!, labels, value: Number(m[4]) });
    } else {
      throw new Error(`unparseable line: ${JSON.stringify(line)}`);
    }
  }
  for (const s of samples) {
    const base = s.name.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(s.name) && !types.has(base)) throw new Error(`sample without TYPE: ${s.name}`);
    const type = types.get(s.name) ?? types.get(base);
    if (type === 'counter' && !s.name.endsWith('_total')) throw new Error(`counter not ending in _total: ${s.name}`);
  }
  return { samples, types };
}

function peer(name: string, state: string, sent: Record<string, number>, prefixes = 0): PeerView {
  return { name, address: '127.0.0.2', port: 179, localAs: 1, peerAs: 2, state, messages: { sent, received: { keepalive: 1 } }, prefixes: { sent: prefixes, received: 0 }, flaps: 0 };
}

t.test('every documented metric is exported and the text parses', async (t) => {
  const m = new HeraldMetrics({ version: '0.1.0' });
  let peers = [peer('tor-a', 'Established', { open: 1, update: 5 }, 3), peer('tor-b', 'Active', { open: 2 })];
  m.setPeersProvider(() => peers);
  m.observeStateChange('tor-a', 'OpenConfirm', 'Established');
  m.observeNotification('tor-b', 'received', 6, 2);
  m.observeHealthCheck('ok', 0.01);
  m.observeHealthCheck('ConnectionRefused', 0.002);
  m.reconcileDuration.observe(0.003);
  m.updateSendDuration.observe({ peer: 'tor-a' }, 0.001);
  m.kubernetesWatchRestarts.inc({ resource: 'services' });
  m.kubernetesLastSync.set({ resource: 'services' }, 1764440000);
  m.kubernetesWatchLastConnect.set({ resource: 'services' }, 1764440001);
  m.kubernetesEventsDropped.inc({ component: 'herald', reason: 'rateLimited' });
  m.objectStatusWrites.inc({ kind: 'BGPPeer', result: 'forbidden' });
  m.observeReload(true, 1764440002000);
  m.setVipsProvider(() => handledVips([{ service: 'default/web', reasons: [], vips: [{ address: '198.51.100.1', kind: 'loadBalancer', announced: true, reasons: [{ code: 'Advertised', message: '' }] }] }]));
  m.setAllocatorProvider(() => ({ lease: 'herald-system/herald-allocator', isLeader: () => true, usage: () => [{ pool: 'default', family: 'IPv4', allocated: 2, available: 14 }], failed: () => new Map([['PoolNotAllowed', 2], ['NoPool', 0]]) }));
  const { body, contentType } = await m.text();
  t.match(contentType, /text\/plain/);
  const { samples, types } = parseExposition(body);
  const expected: Record<string, string> = {
    herald_bgp_session_up: 'gauge',
    herald_bgp_session_state_changes_total: 'counter',
    herald_bgp_messages_sent_total: 'counter',
    herald_bgp_messages_received_total: 'counter',
    herald_bgp_notifications_total: 'counter',
    herald_bgp_prefixes_advertised: 'gauge',
    herald_bgp_update_send_duration_seconds: 'histogram',
    herald_health_check_results_total: 'counter',
    herald_health_check_duration_seconds: 'histogram',
    herald_reconcile_duration_seconds: 'histogram',
    herald_kubernetes_watch_restarts_total: 'counter',
    herald_kubernetes_last_sync_timestamp_seconds: 'gauge',
    herald_build_info: 'gauge',
    herald_kubernetes_watch_last_connect_timestamp_seconds: 'gauge',
    herald_kubernetes_events_dropped_total: 'counter',
    herald_object_status_writes_total: 'counter',
    herald_node_set_writes_total: 'counter',
    herald_config_reloads_total: 'counter',
    herald_config_last_reload_successful: 'gauge',
    herald_config_last_reload_success_timestamp_seconds: 'gauge',
    herald_vip_announced: 'gauge',
    herald_tenant_inputs_refused: 'gauge',
    herald_ipam_pool_addresses: 'gauge',
    herald_ipam_leader: 'gauge',
    herald_ipam_allocations_failed: 'gauge',
  };
  for (const [name, type] of Object.entries(expected)) t.equal(types.get(name), type, `${name} is a ${type}`);
  const get = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  t.equal(get('herald_bgp_session_up', { peer: 'tor-a' }), 1);
  t.equal(get('herald_bgp_session_up', { peer: 'tor-b' }), 0);
  t.equal(get('herald_bgp_prefixes_advertised', { peer: 'tor-a' }), 3);
  t.equal(get('herald_bgp_messages_sent_total', { peer: 'tor-a', type: 'update' }), 5);
  t.equal(get('herald_bgp_notifications_total', { peer: 'tor-b', direction: 'received', code: '6', subcode: '2' }), 1);
  t.equal(get('herald_build_info', { version: '0.1.0' }), 1);
  t.same(Object.keys(samples.find((s) => s.name === 'herald_build_info')?.labels ?? {}), ['version'], 'no node label: the scrape target carries the node (PodMonitor relabeling)');
  t.equal(get('herald_vip_announced', { service: 'default/web', address: '198.51.100.1' }), 1);
  t.equal(get('herald_ipam_pool_addresses', { pool: 'default', family: 'IPv4', state: 'allocated' }), 2);
  t.equal(get('herald_ipam_pool_addresses', { pool: 'default', family: 'IPv4', state: 'available' }), 14);
  t.equal(get('herald_ipam_leader', { lease: 'herald-system/herald-allocator' }), 1);
  t.equal(get('herald_ipam_allocations_failed', { reason: 'PoolNotAllowed' }), 2);
  t.equal(get('herald_ipam_allocations_failed', { reason: 'NoPool' }), 0);
  t.equal(get('herald_config_last_reload_successful', {}), 1);
  t.equal(get('herald_config_last_reload_success_timestamp_seconds', {}), 1764440002);
  t.equal(get('herald_kubernetes_events_dropped_total', { component: 'herald', reason: 'rateLimited' }), 1);
  t.equal(get('herald_object_status_writes_total', { kind: 'BGPPeer', result: 'forbidden' }), 1);
  t.equal(get('herald_health_check_results_total', { result: 'ConnectionRefused' }), 1);
  t.equal(get('herald_reconcile_duration_seconds_count', {}), 1);
  t.ok(samples.some((s) => s.name === 'process_cpu_user_seconds_total'), 'default process metrics present');

  // The session restarts: its per-session counts start again from zero; the counter must not go down.
  peers = [peer('tor-a', 'Established', { open: 1, update: 2 }, 3), peer('tor-b', 'Active', { open: 2 })];
  const again = parseExposition((await m.text()).body).samples;
  t.equal(again.find((s) => s.name === 'herald_bgp_messages_sent_total' && s.labels['peer'] === 'tor-a' && s.labels['type'] === 'update')?.value, 7);
  // A removed peer disappears from the gauges.
  peers = [peer('tor-a', 'Idle', {})];
  const third = parseExposition((await m.text()).body).samples;
  t.equal(third.filter((s) => s.name === 'herald_bgp_session_up').length, 1);
  t.equal(third.find((s) => s.name === 'herald_bgp_session_up')?.value, 0);
});

t.test('the parser rejects malformed text (it can fail)', async (t) => {
  t.throws(() => parseExposition('foo 1'));
  t.throws(() => parseExposition('# TYPE foo counter\nfoo 1\n'));
  t.throws(() => parseExposition('bar{a="1" 2\n'));
});

t.test('herald_vip_announced: one series per handled VIP, announced if any of its kinds is', async (t) => {
  const m = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const vip = (address: string, kind: string, announced: boolean, code: string) => ({ address, kind, announced, reasons: [{ code, message: '' }] });
  m.setVipsProvider(() => handledVips([
    { service: 'a/x', reasons: [], vips: [vip('192.0.2.1', 'loadBalancer', false, 'NoLocalReadyEndpoint'), vip('192.0.2.1', 'externalIP', true, 'Advertised'), vip('10.96.0.1', 'clusterIP', false, 'NoAdvertisement')] },
    { service: 'a/y', reasons: [], vips: [vip('192.0.2.2', 'loadBalancer', false, 'ForeignLoadBalancerClass'), vip('192.0.2.3', 'loadBalancer', false, 'NodeNotReady')] },
  ]));
  const s = parseExposition((await m.text()).body).samples.filter((x) => x.name === 'herald_vip_announced');
  t.same(s.map((x) => [x.labels['service'], x.labels['address'], x.value]), [['a/x', '192.0.2.1', 1], ['a/y', '192.0.2.3', 0]]);
});

t.test('herald_tenant_inputs_refused counts refused VIPs by reason; a refused VIP has no herald_vip_announced series', async (t) => {
  const m = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const vip = (address: string, announced: boolean, ...codes: string[]) => ({ address, kind: 'externalIP', announced, reasons: codes.map((code) => ({ code, message: '' })) });
  const services = [
    { service: 't/x', reasons: [], vips: [vip('8.8.8.8', false, 'PrefixNotAllowed'), vip('1.1.1.1', false, 'NodeNotReady', 'PrefixNotAllowed')] },
    // Announced through one advertisement, refused by another: counted, and still a series of its own.
    { service: 't/y', reasons: [], vips: [vip('198.51.100.1', true, 'Advertised', 'PrefixNotAllowed', 'PrefixNotAllowed')] },
  ];
  m.setVipsProvider(() => handledVips(services));
  m.setRefusalsProvider(() => refusedInputs(services));
  const samples = parseExposition((await m.text()).body).samples;
  t.same(samples.filter((x) => x.name === 'herald_tenant_inputs_refused').map((x) => [x.labels['reason'], x.value]), [['PrefixNotAllowed', 3], ['AttributeNotAllowed', 0]]);
  t.same(samples.filter((x) => x.name === 'herald_vip_announced').map((x) => [x.labels['address'], x.value]), [['198.51.100.1', 1]], 'a tenant cannot add series with addresses Herald refuses');
  m.setRefusalsProvider(() => refusedInputs([]));
  const none = parseExposition((await m.text()).body).samples.filter((x) => x.name === 'herald_tenant_inputs_refused');
  t.same(none.map((x) => [x.labels['reason'], x.value]), [['PrefixNotAllowed', 0], ['AttributeNotAllowed', 0]], 'zero, not absent, once nothing is refused');
});

t.test('herald_status_writer_leader: absent without a status writer, then 1 while it leads', async (t) => {
  const m = new HeraldMetrics({ version: 't', defaultMetrics: false });
  t.notOk(parseExposition((await m.text()).body).samples.some((x) => x.name === 'herald_status_writer_leader'));
  let leads = false;
  m.setStatusWriterProvider(() => ({ lease: 'herald-system/herald-status', isLeader: () => leads }));
  const value = async () => parseExposition((await m.text()).body).samples.filter((x) => x.name === 'herald_status_writer_leader').map((x) => [x.labels, x.value]);
  t.same(await value(), [[{ lease: 'herald-system/herald-status' }, 0]]);
  leads = true;
  t.same(await value(), [[{ lease: 'herald-system/herald-status' }, 1]]);
});

t.test('no allocator: no pool or leader series; a follower reports 0', async (t) => {
  const m = new HeraldMetrics({ version: 't', defaultMetrics: false });
  const names = parseExposition((await m.text()).body).samples.map((x) => x.name);
  t.notOk(names.includes('herald_ipam_leader') || names.includes('herald_ipam_pool_addresses'));
  m.setAllocatorProvider(() => ({ lease: 'herald-system/herald-allocator', isLeader: () => false, usage: () => [], failed: () => new Map() }));
  const samples = parseExposition((await m.text()).body).samples;
  t.same(samples.filter((x) => x.name === 'herald_ipam_leader').map((x) => [x.labels, x.value]), [[{ lease: 'herald-system/herald-allocator' }, 0]]);
});

// Regression: series with a peer label stayed after the peer was removed.
t.test('removePeer drops every series of that peer and only those', async (t) => {
  const m = new HeraldMetrics({ version: 't', defaultMetrics: false });
  let peers = [peer('a', 'Established', { open: 1 }), peer('b', 'Established', { open: 1, update: 3 })];
  m.setPeersProvider(() => peers);
  for (const p of ['a', 'b']) {
    m.observeStateChange(p, 'OpenConfirm', 'Established');
    m.observeNotification(p, 'sent', 6, 4);
    m.observeBfdStateChange(p, 'Down', 'Up');
    m.observeUpdateSent(p, 0.001);
  }
  const of = async (name: string) => parseExposition((await m.text()).body).samples.filter((s) => s.labels['peer'] === name);
  t.ok((await of('b')).length >= 10, 'b has series');
  const aBefore = (await of('a')).length;
  peers = [peers[0]!];
  m.removePeer('b');
  t.same(await of('b'), []);
  t.equal((await of('a')).length, aBefore, 'a keeps its own');
  // A new b counts messages from zero (no stale per-session count to subtract).
  peers = [peers[0]!, peer('b', 'Established', { open: 1 })];
  t.equal((await of('b')).find((s) => s.name === 'herald_bgp_messages_sent_total' && s.labels['type'] === 'open')?.value, 1);
});
