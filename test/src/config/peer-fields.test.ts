/**
 * The peer-option spine, walked field by field: every field of a peer in the file (src/config/schema.ts `peerSchema`)
 * has its row in src/config/peer-fields.ts — the Speaker option it sets (or why the daemon keeps it), a CRD name (or an
 * explicit "file only"), a classification (what a change does: the Speaker's rule, bgp/peer-config.ts), a display (a
 * path of the peer's view, or why it is not shown) — and the defaults and ranges of the file, the CRD and the Speaker
 * are bgp/'s. A new session option is three hand edits (its field and row in bgp/peer-config.ts, its zod field in
 * schema.ts, its row in peer-fields.ts) and `node scripts/gen-config-docs.ts`; this test says what is missing.
 */
import t from 'tap';
import { BFD_OPTIONS, changeOf, PEER_OPTIONS } from '../../../bgp/peer-config.ts';
import type { PeerOption, SubOption } from '../../../bgp/peer-config.ts';
import { BFD_FIELDS, fileChangeResets, PEER_FIELDS, toSpeakerPeer } from '../../../src/config/peer-fields.ts';
import { validateConfig } from '../../../src/config/load.ts';
import { peerSchema } from '../../../src/config/schema.ts';
import { BGP_NODE_CONFIG_OVERRIDE, BGP_PEER } from '../../../src/crd/kinds.ts';
import { kindSchemas } from '../../../src/crd/schema.ts';
import { peerViewSchema } from '../../../src/admin/peer-view.ts';
import { diffConfig } from '../../../src/daemon/diff.ts';

/** Options of the Speaker no field of the file sets, and why. */
const NOT_FROM_THE_FILE: Record<string, string> = {
  bgpIdentifier: "the node's (bgp.routerId, a BGPNodeConfigOverride's routerID)",
  localPort: 'Herald dials from any port',
  extendedMessage: 'always offered (RFC 8654)',
};

const rows = Object.entries(PEER_FIELDS);
const options: Readonly<Record<string, PeerOption>> = PEER_OPTIONS;
const bfdOptions: Readonly<Record<string, SubOption>> = BFD_OPTIONS;
const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' } };
/** What a field's range is checked with besides it (a cross-field rule: a keepalive below the hold time unless 0). */
const WITH: Record<string, object> = { keepaliveTime: { holdTime: 0 } };
const peer = { name: 'r1', address: '192.0.2.1', peerAs: 65001 };

/** The problems of a configuration with one peer (`path: message`). */
function problems(p: object): string[] {
  const r = validateConfig({ ...base, peers: [{ ...peer, ...p }] });
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
}

/** The peer of a valid configuration, defaults applied. */
function parsed(p: object = {}) {
  const r = validateConfig({ ...base, peers: [{ ...peer, ...p }] });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const out = r.config.peers[0];
  if (!out) throw new Error('no peer');
  return out;
}

/** True when `path` ("negotiated.holdTimeSec") names a property of the peer view's schema. */
function inView(path: string): boolean {
  let node: unknown = peerViewSchema;
  for (const part of path.split('.')) {
    const props = typeof node === 'object' && node !== null && 'properties' in node ? node.properties : undefined;
    if (typeof props !== 'object' || props === null || !Object.hasOwn(props, part)) return false;
    node = Object.entries(props).find(([k]) => k === part)?.[1];
  }
  return true;
}

t.test('every field of the file has a row, and every row a field', async (t) => {
  const fields = Object.keys(peerSchema.shape).sort();
  t.ok(fields.length >= 20, `peerSchema has ${fields.length} fields`);
  t.same(rows.map(([f]) => f).sort(), fields);
});

t.test('each row: a Speaker option or the daemon, a CRD name or "file only", a classification, a display', async (t) => {
  const crd = kindSchemas(BGP_PEER).spec.properties ?? {};
  const overridePeer = kindSchemas(BGP_NODE_CONFIG_OVERRIDE).spec.properties?.['peers']?.items?.properties ?? {};
  for (const [field, row] of rows) {
    // the Speaker option, and the classification: the Speaker's rule for it, or "daemon" (never a reset)
    if ('bgp' in row) {
      t.ok(Object.hasOwn(options, row.bgp), `${field}: sets the Speaker's ${row.bgp}, a row of PEER_OPTIONS`);
      t.ok(['session', 'export', 'bfd'].includes(changeOf(row.bgp)), `${field}: a change is ${changeOf(row.bgp)}`);
      t.equal(fileChangeResets([field]), changeOf(row.bgp) === 'session', `${field}: a reload resets the session as the Speaker does`);
    } else {
      t.ok(row.daemon.length > 10, `${field}: the daemon's (${row.daemon})`);
      t.notOk(fileChangeResets([field]), `${field}: a change never resets a session`);
    }
    // the CRD name
    if (row.crd === undefined || typeof row.crd === 'string') {
      const name = row.crd ?? field;
      if (name === 'metadata.name') {
        t.notOk(Object.hasOwn(crd, field), `${field}: a BGPPeer's metadata.name, not in its spec`);
        t.ok(Object.hasOwn(overridePeer, field), `${field}: in a BGPNodeConfigOverride's peers`);
      } else {
        t.ok(Object.hasOwn(crd, name), `${field}: ${name} in the BGPPeer CRD`);
        if (name !== field) t.notOk(Object.hasOwn(crd, field), `${field}: only as ${name} there`);
      }
    } else {
      t.notOk(Object.hasOwn(crd, field), `${field}: file only (${row.crd.fileOnly})`);
    }
    // the display
    if (typeof row.display === 'string') t.ok(inView(row.display), `${field}: shown as ${row.display} in the peer's view`);
    else t.ok(row.display.hidden.length > 10, `${field}: not shown (${row.display.hidden})`);
  }
});

t.test("every Speaker option is some field's, or says why not", async (t) => {
  const set = new Set<string>(rows.flatMap(([, row]) => ('bgp' in row ? [row.bgp] : [])));
  for (const option of Object.keys(options)) t.ok(set.has(option) !== Object.hasOwn(NOT_FROM_THE_FILE, option), `${option}: ${set.has(option) ? 'from the file' : NOT_FROM_THE_FILE[option]}`);
});

t.test("units, defaults and ranges of the file are bgp/'s", async (t) => {
  const defaults = parsed();
  const description = (field: string): string => peerSchema.shape[field as keyof typeof peerSchema.shape].description ?? '';
  let ranges = 0;
  for (const [field, row] of rows) {
    if (!('bgp' in row)) continue;
    const o = options[row.bgp];
    if (o === undefined) continue;
    if (o.unit === 's') t.match(description(field), /seconds/i, `${field}: in seconds`);
    if (o.unit === 'ms') t.match(description(field), /milliseconds/i, `${field}: in milliseconds`);
    const value = Object.entries(defaults).find(([k]) => k === field)?.[1];
    if (o.default !== undefined) t.same(value, o.default, `${field}: default ${JSON.stringify(o.default)}`);
    if (o.min !== undefined && o.max !== undefined && !['port', 'peerAs', 'localAs'].includes(field)) {
      ranges++;
      const w = WITH[field] ?? {};
      t.same(problems({ ...w, [field]: o.min }), [], `${field}: ${o.min} taken`);
      t.same(problems({ ...w, [field]: o.max }), [], `${field}: ${o.max} taken`);
      t.match(problems({ ...w, [field]: o.min - 1 }), [new RegExp(`^peers\\[0\\]\\.${field}: `)], `${field}: ${o.min - 1} refused`);
      t.match(problems({ ...w, [field]: o.max + 1 }), [new RegExp(`^peers\\[0\\]\\.${field}: `)], `${field}: ${o.max + 1} refused`);
      for (const n of o.not ?? []) t.match(problems({ ...w, [field]: n }), [new RegExp(`^peers\\[0\\]\\.${field}: `)], `${field}: ${n} refused`);
    }
  }
  t.ok(ranges >= 5, `${ranges} ranges checked`);
});

t.test('BFD: two shapes (the file\'s names, bgp/\'s), one table; defaults and ranges bgp/\'s', async (t) => {
  const fileBfd = parsed({ bfd: { enabled: true } }).bfd ?? {};
  const mapped = new Set<string>();
  for (const [field, to] of Object.entries(BFD_FIELDS)) {
    if (typeof to !== 'string') {
      t.ok(to.daemon.length > 10, `bfd.${field}: the daemon's (${to.daemon})`);
      continue;
    }
    mapped.add(to);
    const o = bfdOptions[to];
    t.ok(o !== undefined, `bfd.${field} → ${to}, a row of BFD_OPTIONS`);
    const value = Object.entries(fileBfd).find(([k]) => k === field)?.[1];
    if (o?.default !== undefined) t.equal(value, o.default, `bfd.${field}: default ${String(o.default)}`);
    if (o?.min !== undefined && o.max !== undefined) {
      t.same(problems({ bfd: { enabled: true, [field]: o.min, ...(field === 'minimumTtl' ? { multihop: true } : {}) } }), [], `bfd.${field}: ${o.min} taken`);
      t.match(problems({ bfd: { enabled: true, [field]: o.max + 1 } }), [new RegExp(`^peers\\[0\\]\\.bfd\\.${field}: `)], `bfd.${field}: ${o.max + 1} refused`);
    }
  }
  t.same([...mapped].sort(), Object.keys(BFD_OPTIONS).sort(), "every BFD option of bgp/ is a field's");
});

t.test('the mapping to the Speaker is the table: each field sets its option', async (t) => {
  const p = parsed({ localAddress: '192.0.2.10', keepaliveTime: 10, ebgpMultihop: 2, nextHop: '192.0.2.11', nextHopV6: '2001:db8::1', maxPrefixes: 5, gracefulRestart: { enabled: true }, bfd: { enabled: true }, password: { env: 'X' } });
  const s = toSpeakerPeer(p, 'pw');
  const set = new Map(Object.entries(s));
  for (const [field, row] of rows) {
    if (!('bgp' in row)) continue;
    if (row.bgp === 'localAs') continue; // the session's: the peer's own or its node's, where it differs (peer-set.ts)
    t.ok(set.has(row.bgp), `${field} → ${row.bgp}`);
  }
  t.equal(s.holdTimeSec, 90);
  t.same(s.gracefulRestart, { restartTimeSec: 120 });
  t.same(s.bfd, { transmitIntervalMs: 300, receiveIntervalMs: 300, detectMultiplier: 3, passive: false });
});

t.test('a reload reports a session reset by the Speaker\'s rule', async (t) => {
  const cfg = (p: object) => {
    const r = validateConfig({ ...base, peers: [{ ...peer, ...p }] });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.config;
  };
  const reset = (before: object, after: object) => diffConfig(cfg(before), cfg(after)).peers.changed.map((c) => c.sessionReset);
  t.same(reset({}, { holdTime: 30 }), [true], 'holdTime: session');
  t.same(reset({}, { nextHop: '192.0.2.9' }), [false], 'nextHop: export');
  t.same(reset({}, { bfd: { enabled: true } }), [false], 'bfd: BFD only');
  t.same(reset({}, { gracefulShutdown: { enabled: true } }), [false], "gracefulShutdown: the daemon's");
  t.same(reset({}, { keepaliveTime: 20, nextHop: '192.0.2.9' }), [true], 'a session field among others: session');
});
