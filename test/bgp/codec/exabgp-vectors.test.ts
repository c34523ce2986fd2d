/**
 * ExaBGP's own vectors (../shared/data/bgp/hex/exabgp/, BSD-3-Clause, see the README there): UPDATE messages that
 * an independent implementation produced, with ExaBGP's JSON decoding as the oracle.
 *
 * For every UPDATE: decodeUpdate must not throw and encode(decode(b)) must give the same bytes (families Herald does
 * not decode — flowspec, BGP-LS, VPN, EVPN, MUP, SR policy — are preserved raw). For IPv4/IPv6 unicast vectors with a
 * JSON line, every attribute and route ExaBGP reports is compared field by field with ours, and every field we
 * report must be in ExaBGP's JSON. The session context (4-octet AS, ADD-PATH) is read from the vector's config.
 */
import t from 'tap';
import type { Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeUpdate, encodeUpdate } from '../../../bgp/codec/update.ts';
import type { CodecContext, PathAttribute, UpdateMessage } from '../../../bgp/codec/types.ts';
import { familyOf } from '../../../bgp/codec/types.ts';
import { missingPrerequisite } from '../../helpers/prereq.ts';

const root = fileURLToPath(new URL('../../../../shared/data/bgp/hex/exabgp/', import.meta.url));

type Json = Record<string, unknown>;

/** Session context from an ExaBGP neighbour config: asn4 unless "asn4 disable"; ADD-PATH families if enabled. */
function contextFromConf(conf: string): CodecContext {
  const fourOctetAs = !/asn4\s+disable/.test(conf);
  const addPath = { ipv4: false, ipv6: false };
  if (/add-path\s+(send|receive|send\/receive)\s*;/.test(conf)) {
    const block = /add-path\s*\{([^}]*)\}/.exec(conf)?.[1] ?? /family\s*\{([^}]*)\}/.exec(conf)?.[1] ?? 'ipv4 unicast;';
    addPath.ipv4 = /ipv4 unicast/.test(block);
    addPath.ipv6 = /ipv6 unicast/.test(block);
  }
  return { fourOctetAs, extendedMessage: true, addPath };
}

function hexToBuffer(s: string): Buffer {
  return Buffer.from(s.replace(/[\s:]/g, ''), 'hex');
}

/** Splits a hex message into the UPDATE body, or undefined if it is not an UPDATE. */
function updateBody(bytes: Buffer): Buffer | undefined {
  if (bytes.length >= 19 && bytes.subarray(0, 16).every((x) => x === 0xff)) return bytes[18] === 2 ? bytes.subarray(19) : undefined;
  return bytes;
}

const ORIGIN = ['igp', 'egp', 'incomplete'];
const SEGMENT: Record<number, string> = { 1: 'as-set', 2: 'as-sequence', 3: 'confed-sequence', 4: 'confed-set' };

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** ExaBGP-shaped view of our decoding, for the fields Herald decodes (IPv4/IPv6 unicast). */
function ours(msg: UpdateMessage): { attribute: Json; announce: Json; withdraw: Json } {
  const attribute: Json = {};
  const announce: Record<string, Record<string, Json[]>> = {};
  const withdraw: Record<string, Json[]> = {};
  const entry = (e: { prefix: string; pathId?: number }): Json => (e.pathId === undefined ? { nlri: e.prefix } : { nlri: e.prefix, 'path-information': dotted(e.pathId) });
  let nextHop: string | undefined;
  for (const a of msg.pathAttributes as PathAttribute[]) {
    switch (a.type) {
      case 'ORIGIN':
        attribute.origin = ORIGIN[a.origin];
        break;
      case 'AS_PATH':
        if (a.segments.length > 0) {
          attribute['as-path'] = Object.fromEntries(a.segments.map((s, i) => [String(i), { element: SEGMENT[s.type], value: [...s.asns] }]));
        }
        break;
      case 'NEXT_HOP':
        nextHop = a.nextHop;
        break;
      case 'MULTI_EXIT_DISC':
        attribute.med = a.med;
        break;
      case 'LOCAL_PREF':
        attribute['local-preference'] = a.localPref;
        break;
      case 'ATOMIC_AGGREGATE':
        attribute['atomic-aggregate'] = true;
        break;
      case 'AGGREGATOR':
        attribute.aggregator = `${a.asNumber}:${a.address}`;
        break;
      case 'COMMUNITIES':
        attribute.community = a.communities.map((c) => [c >>> 16, c & 0xffff]);
        break;
      case 'LARGE_COMMUNITY':
        attribute['large-community'] = a.largeCommunities.map((c) => [...c]);
        break;
      case 'EXTENDED_COMMUNITIES':
        attribute['extended-community'] = a.extendedCommunities.map((c) => Number(c.value.readBigUInt64BE(0)));
        break;
      case 'ORIGINATOR_ID':
        attribute['originator-id'] = a.originatorId;
        break;
      case 'CLUSTER_LIST':
        attribute['cluster-list'] = [...a.clusterIds];
        break;
      case 'MP_REACH_NLRI': {
        const fam = familyOf(a.afi, a.safi);
        if (fam && a.nlri.length > 0) {
          const key = fam === 'ipv4-unicast' ? 'ipv4 unicast' : 'ipv6 unicast';
          (announce[key] ??= {})[a.nextHops[0] ?? ''] = a.nlri.map(entry);
        }
        break;
      }
      case 'MP_UNREACH_NLRI': {
        const fam = familyOf(a.afi, a.safi);
        if (fam && a.withdrawnRoutes.length > 0) withdraw[fam === 'ipv4-unicast' ? 'ipv4 unicast' : 'ipv6 unicast'] = a.withdrawnRoutes.map(entry);
        break;
      }
      case 'UNKNOWN': {
        // ExaBGP's generic attribute form: "attribute-0x<CODE>-0x<FLAGS>": "0x<VALUE>" (upper-case hex).
        const h = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');
        attribute[`attribute-0x${h(a.typeCode)}-0x${h(a.flags)}`] = `0x${a.value.toString('hex').toUpperCase()}`;
        break;
      }
      default:
        attribute[`not-compared-${a.type}`] = true;
    }
  }
  if (msg.nlri.length > 0) (announce['ipv4 unicast'] ??= {})[nextHop ?? ''] = msg.nlri.map(entry);
  if (msg.withdrawnRoutes.length > 0) withdraw['ipv4 unicast'] = msg.withdrawnRoutes.map(entry);
  return { attribute, announce, withdraw };
}

/** ExaBGP's JSON reduced to the same shape: extended communities to their numeric value, aggregator as text. */
function theirs(update: Json): { attribute: Json; announce: Json; withdraw: Json } {
  const attribute = { ...((update.attribute as Json | undefined) ?? {}) };
  if (Array.isArray(attribute['extended-community'])) {
    attribute['extended-community'] = (attribute['extended-community'] as Json[]).map((c) => c.value);
  }
  return { attribute, announce: (update.announce as Json | undefined) ?? {}, withdraw: (update.withdraw as Json | undefined) ?? {} };
}

function inScope(update: Json): boolean {
  const fams = [...Object.keys((update.announce as Json | undefined) ?? {}), ...Object.keys((update.withdraw as Json | undefined) ?? {})];
  return fams.every((f) => f === 'ipv4 unicast' || f === 'ipv6 unicast');
}

function run(): void {
  const stats = { updates: 0, roundTrips: 0, compared: 0, withdrawnByRfc7606: 0 };

  function check(tt: Test, label: string, body: Buffer, ctx: CodecContext, json: Json | undefined): void {
    stats.updates++;
    const r = decodeUpdate(body, ctx);
    tt.equal(encodeUpdate(r.message, ctx).toString('hex'), body.toString('hex'), `${label}: encode(decode(b)) == b`);
    stats.roundTrips++;
    if (r.treatAsWithdraw) {
      stats.withdrawnByRfc7606++;
      tt.comment(`${label}: RFC 7606 treat-as-withdraw: ${r.problems.join('; ')}`);
    }
    if (!json) return;
    const update = ((json.message as Json | undefined)?.update ?? undefined) as Json | undefined;
    if (!update || !inScope(update)) return;
    const a = ours(r.message);
    const b = theirs(update);
    tt.same(a.attribute, b.attribute, `${label}: attributes`);
    tt.same(a.announce, b.announce, `${label}: announced routes`);
    tt.same(a.withdraw, b.withdraw, `${label}: withdrawn routes`);
    stats.compared++;
  }

  t.test('ExaBGP encoding vectors (qa/encoding/*.ci)', async (tt) => {
    const files = readdirSync(`${root}encoding`).filter((f) => f.endsWith('.ci')).sort();
    tt.equal(files.length, 40, '.ci files found');
    for (const f of files) {
      const text = readFileSync(`${root}encoding/${f}`, 'utf8');
      const confName = /^option:file:(\S+)/m.exec(text)?.[1];
      const confPath = `${root}etc/${confName}`;
      const ctx = contextFromConf(confName && existsSync(confPath) ? readFileSync(confPath, 'utf8') : '');
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const m = /^(\d+):raw:(.*)$/.exec(lines[i] ?? '');
        if (!m) continue;
        const body = updateBody(hexToBuffer(m[2] as string));
        if (!body) continue;
        const next = /^(\d+):json:(.*)$/.exec(lines[i + 1] ?? '');
        const json = next && next[1] === m[1] ? (JSON.parse(next[2] as string) as Json).neighbor as Json : undefined;
        check(tt, `${f} line ${i + 1}`, body, ctx, json);
      }
    }
  });

  t.test('ExaBGP decoding vectors (qa/decoding/*)', async (tt) => {
    const files = readdirSync(`${root}decoding`).sort();
    tt.equal(files.length, 22, 'decoding files found');
    const ctx: CodecContext = { fourOctetAs: true, extendedMessage: true, addPath: {} };
    for (const f of files) {
      const [hint, hexLine, jsonLine] = readFileSync(`${root}decoding/${f}`, 'utf8').split('\n');
      if (!hint?.startsWith('update')) continue; // OPEN and a bare BGP-LS NLRI
      const body = updateBody(hexToBuffer(hexLine ?? ''));
      if (!body) continue;
      const json = (JSON.parse(jsonLine ?? '{}') as Json).neighbor as Json | undefined;
      check(tt, f, body, ctx, json);
    }
  });

  t.test('counts', async (tt) => {
    // The 40 .ci files hold 162 UPDATEs (the README's scan said about 160); 20 of the 22 decoding files are UPDATEs.
    tt.equal(stats.updates, 182, 'UPDATE vectors decoded');
    tt.equal(stats.roundTrips, 182, 'byte-exact round trips');
    // IPv4/IPv6 unicast vectors with a JSON decoding (the rest are other families, or have no JSON line).
    tt.equal(stats.compared, 56, "vectors compared field by field with ExaBGP's JSON");
    // NEXT_HOP 255.255.255.255 (conf-attributes) and two attributes 0x99 with well-known flags (conf-generic-attribute).
    tt.equal(stats.withdrawnByRfc7606, 3, 'treat-as-withdraw by RFC 7606 / RFC 4271 §6.3 rules');
    tt.comment(`ExaBGP vectors: ${stats.updates} UPDATEs, ${stats.compared} compared with JSON, ${stats.withdrawnByRfc7606} treat-as-withdraw`);
  });
}

if (!missingPrerequisite({ [`shared data (${root})`]: existsSync(root) }, '../shared is not checked out beside the repository')) {
  run();
}
