// docs/metallb-migration.md is true (issue 32 item 4): its MetalLB example is test/fixtures/metallb/realistic.yaml,
// and what it shows `herald migrate metallb` writing (objects, notes, exit code) is what the command writes; every
// object written is one Herald takes; each "Not supported" item is a "not carried" line of the tool; the objects'
// meaning: the advertisements select the same pools and carry the aliases' values.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/main.ts';
import { readObject } from '../../src/crd/objects.ts';
import type { ConfigKind, HeraldObject } from '../../src/k8s/herald-kinds.ts';
import { goDurationSeconds, inputObjects, migrateMetalLB } from '../../src/migrate/metallb.ts';

const root = join(import.meta.dirname, '..', '..');
const FIXTURE = join(root, 'test/fixtures/metallb/realistic.yaml');
const doc = readFileSync(join(root, 'docs/metallb-migration.md'), 'utf8');
const blocks = (lang: string) => [...doc.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] as string);

async function run(argv: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) }, env: {}, ...(stdin !== undefined ? { stdin: async () => stdin } : {}) });
  return { code, out, err };
}

t.test('the example is the fixture, and the output shown is the output', async (t) => {
  const fixture = readFileSync(FIXTURE, 'utf8');
  const yamlBlocks = blocks('yaml');
  const input = yamlBlocks.find((b) => b.includes('apiVersion: metallb.io/'));
  t.ok(input, 'the doc shows a MetalLB configuration');
  t.same(parseAllDocuments(input as string).map((d) => d.toJS()), parseAllDocuments(fixture).map((d) => d.toJS()), 'the doc\'s MetalLB objects are the fixture\'s');
  const r = await run(['migrate', 'metallb', FIXTURE]);
  t.equal(r.code, 1, 'exit 1: something not carried, as the doc says');
  t.ok(doc.includes('(exit 1: two things not carried)'));
  const shown = yamlBlocks.find((b) => b.includes('apiVersion: herald.io/'));
  t.equal(shown, r.out, 'the Herald objects shown are those written');
  t.equal(blocks('text')[0], r.err, 'the notes shown are those written');
  t.equal((r.err.match(/^not carried: /gm) ?? []).length, 2);
  const objs = parseAllDocuments(r.out).map((d) => d.toJS() as HeraldObject);
  t.equal(objs.length, 6, '2 pools, 2 peers, 2 advertisements');
  for (const o of objs) t.ok(readObject(o.kind as ConfigKind, o).ok, `Herald takes ${o.kind} ${o.metadata?.name}`);
  // Standard input gives the same.
  const piped = await run(['migrate', 'metallb', '-', '-n', 'herald'], readFileSync(FIXTURE, 'utf8'));
  t.equal(piped.out, r.out.replaceAll('namespace: herald-system', 'namespace: herald'), '- reads standard input; -n names the namespace');
});

t.test('the objects mean what MetalLB\'s meant', async (t) => {
  const m = migrateMetalLB(inputObjects(parseAllDocuments(readFileSync(FIXTURE, 'utf8')).map((d) => d.toJS() as unknown)));
  const get = (kind: string, name: string) => m.objects.find((o) => o.kind === kind && o.metadata?.name === name)?.spec as Record<string, unknown> | undefined;
  t.same(get('BGPAdvertisement', 'prod'), { localPref: 200, ipAddressPoolSelectors: [{ matchLabels: { tier: 'prod' } }], communities: ['65000:666'], largeCommunities: ['65000:1:2'] }, 'aliases → values; large: → a large community');
  t.same(m.objects.find((o) => o.metadata?.name === 'prod' && o.kind === 'IPAddressPool')?.metadata?.labels, { tier: 'prod' }, 'the pool keeps the labels the advertisement selects it by');
  t.match(get('BGPPeer', 'tor-a'), { holdTime: 90, keepaliveTime: 30, families: ['ipv4-unicast'], bfd: { enabled: true, transmitInterval: 100, receiveInterval: 100, detectMultiplier: 3 }, passwordSecret: { name: 'tor-a', key: 'password' } });
  t.match(get('BGPPeer', 'tor-b'), { ebgpMultihop: 255 });
  t.same(get('IPAddressPool', 'lab'), { addresses: ['203.0.113.10-203.0.113.20'], autoAssign: false, avoidBuggyIPs: true });
});

t.test('each "Not supported" item is refused in words', async (t) => {
  const peer = (name: string, extra: Record<string, unknown>) => ({ apiVersion: 'metallb.io/v1beta2', kind: 'BGPPeer', metadata: { name, namespace: 'metallb-system' }, spec: { myASN: 64600, peerASN: 65000, peerAddress: '192.0.2.1', ...extra } });
  const input = [
    peer('unnumbered', { interface: 'eth0' }),
    peer('vrf', { vrf: 'red' }),
    peer('dyn', { dynamicASN: 'external' }),
    peer('local', { localASN: 65010 }),
    peer('rid', { routerID: '10.0.0.1' }),
    peer('echo', { bfdProfile: 'e' }),
    { apiVersion: 'metallb.io/v1beta1', kind: 'BFDProfile', metadata: { name: 'e' }, spec: { echoMode: true } },
    { apiVersion: 'metallb.io/v1beta1', kind: 'L2Advertisement', metadata: { name: 'l2' }, spec: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: 'metallb-system' } },
  ];
  const m = migrateMetalLB(input);
  const refused = m.notes.filter((n) => n.level === 'refused').map((n) => `${n.object} ${n.field ?? ''}`.trim());
  t.same(refused, [
    'ConfigMap metallb-system/config',
    'BGPPeer metallb-system/unnumbered spec.interface',
    'BGPPeer metallb-system/vrf spec.vrf',
    'BGPPeer metallb-system/dyn spec.dynamicASN',
    'BGPPeer metallb-system/local spec.localASN',
    'BGPPeer metallb-system/rid spec.routerID',
    'BGPPeer metallb-system/echo spec.bfdProfile',
    'L2Advertisement l2',
    '(input)',
  ]);
  t.same(m.objects.map((o) => o.metadata?.name), ['local', 'rid', 'echo'], 'interface, vrf, dynamicASN: the peer is left out; the others keep the peer');
  for (const item of ['L2 mode', '`interface`', '`vrf`', '`dynamicASN`', '`localASN`', '`routerID`', '`echoMode`', 'configmaptocrs', 'No BGPAdvertisement']) t.ok(doc.includes(item), `the doc names ${item}`);
});

t.test('inline passwords are never written; durations; priority 0', async (t) => {
  const m = migrateMetalLB([{ apiVersion: 'metallb.io/v1beta1', kind: 'BGPPeer', metadata: { name: 'p', namespace: 'metallb-system' }, spec: { myASN: 1, peerASN: 2, peerAddress: '2001:db8::1', password: 's3cret', holdTime: '1.5s', dualStackAddressFamily: true } }, { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: 'z' }, spec: { addresses: ['192.0.2.0/28'], serviceAllocation: { priority: 0 } } }, { apiVersion: 'metallb.io/v1beta1', kind: 'BGPAdvertisement', metadata: { name: 'a' }, spec: {} }]);
  t.notOk(JSON.stringify(m).includes('s3cret'), 'the password appears nowhere in the output or the notes');
  t.match(m.objects[1]?.spec, { passwordSecret: { name: 'p-password', key: 'password' }, families: ['ipv4-unicast', 'ipv6-unicast'] });
  t.match(m.notes.find((n) => n.field === 'spec.holdTime')?.message, /not a whole number of seconds/);
  t.same(m.objects[0]?.spec, { addresses: ['192.0.2.0/28'] }, 'priority 0 is MetalLB\'s "no priority": left out');
  t.same([goDurationSeconds('90s'), goDurationSeconds('1m30s'), goDurationSeconds('2h'), goDurationSeconds('1500ms'), goDurationSeconds('90')], [90, 90, 7200, undefined, undefined]);
});

t.test('unreadable and non-YAML input: exit 2', async (t) => {
  t.equal((await run(['migrate', 'metallb', '/nonexistent.yaml'])).code, 2);
  const r = await run(['migrate', 'metallb', '-'], 'a: [');
  t.equal(r.code, 2);
  t.match(r.err, /is not YAML/);
  t.equal((await run(['migrate', 'calico', 'x'])).code, 2, 'only metallb');
  t.ok(parse('a: 1'), 'yaml');
});
