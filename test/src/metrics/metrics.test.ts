// Metrics: every documented metric exists, the exposition text parses (promtool rules), and
// message counters stay monotonic across session restarts.
import t from 'tap';
import type { PeerView } from '../../../src/admin/view.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';

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
  const m = new HeraldMetrics({ version: '0.1.0', node: 'node-a' });
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
  };
  for (const [name, type] of Object.entries(expected)) t.equal(types.get(name), type, `${name} is a ${type}`);
  const get = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  t.equal(get('herald_bgp_session_up', { peer: 'tor-a' }), 1);
  t.equal(get('herald_bgp_session_up', { peer: 'tor-b' }), 0);
  t.equal(get('herald_bgp_prefixes_advertised', { peer: 'tor-a' }), 3);
  t.equal(get('herald_bgp_messages_sent_total', { peer: 'tor-a', type: 'update' }), 5);
  t.equal(get('herald_bgp_notifications_total', { peer: 'tor-b', direction: 'received', code: '6', subcode: '2' }), 1);
  t.equal(get('herald_build_info', { version: '0.1.0', node: 'node-a' }), 1);
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
