/**
 * Path attributes of real MRT TABLE_DUMP_V2 RIB entries (RFC 6396 §4.3), read with
 * `decodePathAttributes(buf, ctx, { mrtRibEntry: true })`: MP_REACH_NLRI comes abbreviated (next-hop length + next
 * hop, as RFC 6396 §4.3.4 says; OpenBGPD, BIRD) or in the full RFC 4760 form (quagga, RIS). Every entry must decode
 * and re-encode byte for byte; for the RIPE bgpdump samples the routes must equal `bgpdump -m` output line for line.
 *
 * Data: ../shared/data/bgp/mrt/ (bgpdump and mrtparse samples, see the README there). The walk below is a minimal
 * TABLE_DUMP_V2 reader written for this test.
 */
import t from 'tap';
import type { Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { decodePathAttributes, encodePathAttributes } from '../../../bgp/codec/attributes.ts';
import { effectiveAsPath, formatAsPath } from '../../../bgp/codec/as-path.ts';
import { canonicalAddress, decodeNlri, formatIPv4, formatIPv6 } from '../../../bgp/codec/nlri.ts';
import type { CodecContext, PathAttribute } from '../../../bgp/codec/types.ts';
import { mrtRecords } from './mrt-records.ts';
import { missingPrerequisite } from '../../helpers/prereq.ts';

const mrtDir = fileURLToPath(new URL('../../../../shared/data/bgp/mrt/', import.meta.url));
const CTX: CodecContext = { fourOctetAs: true, extendedMessage: true, addPath: {} }; // RFC 6396 §4.3.4: 4-octet ASes

interface RibEntry {
  ts: number;
  prefix: string;
  pathId?: number;
  peerIp: string;
  peerAs: number;
  attrs: Buffer;
}

/** RIB_IPV4_UNICAST (2), RIB_IPV6_UNICAST (4) and their ADD-PATH forms (8, 10; RFC 8050) of TABLE_DUMP_V2 (13). */
function* ribEntries(mrt: Buffer): Generator<RibEntry> {
  let peers: { ip: string; as: number }[] = [];
  for (const { ts, type, subtype, start } of mrtRecords(mrt)) {
    let q = start;
    if (type !== 13) continue;
    if (subtype === 1) {
      q += 4;
      q += 2 + mrt.readUInt16BE(q);
      const count = mrt.readUInt16BE(q);
      q += 2;
      peers = [];
      for (let i = 0; i < count; i++) {
        const pt = mrt[q] as number;
        q += 5;
        const ip = pt & 1 ? formatIPv6(mrt, q) : formatIPv4(mrt, q);
        q += pt & 1 ? 16 : 4;
        const as = pt & 2 ? mrt.readUInt32BE(q) : mrt.readUInt16BE(q);
        q += pt & 2 ? 4 : 2;
        peers.push({ ip, as });
      }
      continue;
    }
    if (![2, 4, 8, 10].includes(subtype)) continue;
    const v6 = subtype === 4 || subtype === 10;
    const addPath = subtype >= 8;
    q += 4;
    const bits = mrt[q] as number;
    const n = (bits + 7) >> 3;
    const [nlri] = decodeNlri(mrt.subarray(q, q + 1 + n), v6 ? 'ipv6-unicast' : 'ipv4-unicast', false);
    q += 1 + n;
    const count = mrt.readUInt16BE(q);
    q += 2;
    for (let i = 0; i < count; i++) {
      const peer = peers[mrt.readUInt16BE(q)] ?? { ip: '?', as: 0 };
      q += 6;
      let pathId: number | undefined;
      if (addPath) {
        pathId = mrt.readUInt32BE(q);
        q += 4;
      }
      const alen = mrt.readUInt16BE(q);
      q += 2;
      yield { ts, prefix: nlri?.prefix ?? '?', pathId, peerIp: peer.ip, peerAs: peer.as, attrs: mrt.subarray(q, q + alen) };
      q += alen;
    }
  }
}

const WELL_KNOWN: Record<number, string> = { 0xffffff01: 'no-export', 0xffffff02: 'no-advertise', 0xffffff03: 'no-export-subconfed' };

/** bgpdump -m line of a RIB entry. */
function line(e: RibEntry, attrs: PathAttribute[]): string {
  const find = <T extends PathAttribute['type']>(type: T): Extract<PathAttribute, { type: T }> | undefined =>
    attrs.find((a) => a.type === type) as Extract<PathAttribute, { type: T }> | undefined;
  const origin = find('ORIGIN');
  const mp = find('MP_REACH_NLRI');
  const nh = e.prefix.includes(':') ? (mp?.nextHops[0] ?? find('NEXT_HOP')?.nextHop) : (find('NEXT_HOP')?.nextHop ?? mp?.nextHops[0]);
  const comms = (find('COMMUNITIES')?.communities ?? []).map((c) => WELL_KNOWN[c] ?? `${c >>> 16}:${c & 0xffff}`).join(' ');
  const agg = find('AGGREGATOR');
  return [
    e.pathId === undefined ? 'TABLE_DUMP2' : 'TABLE_DUMP2_AP',
    e.ts,
    'B',
    e.peerIp,
    e.peerAs,
    e.prefix,
    ...(e.pathId === undefined ? [] : [e.pathId]),
    formatAsPath(effectiveAsPath(attrs)),
    // bgpdump's defaults when the entry has no ORIGIN / no next hop at all (not data): INCOMPLETE, 255.255.255.255.
    origin ? ['IGP', 'EGP', 'INCOMPLETE'][origin.origin] : 'INCOMPLETE',
    nh ?? '255.255.255.255',
    find('LOCAL_PREF')?.localPref ?? 0,
    find('MULTI_EXIT_DISC')?.med ?? 0,
    comms,
    find('ATOMIC_AGGREGATE') ? 'AG' : 'NAG',
    agg ? `${agg.asNumber} ${agg.address}` : '',
    '',
  ].join('|');
}

/** bgpdump's IPv6 text compresses single zero groups; compare peer, prefix and next hop in RFC 5952 form. */
function canonicalLine(l: string): string {
  const f = l.split('|');
  const nhAt = f[0] === 'TABLE_DUMP2_AP' ? 9 : 8;
  for (const i of [3, 5, nhAt]) {
    const v = f[i];
    if (v === undefined || !v.includes(':')) continue;
    const [a, len] = v.split('/');
    f[i] = len === undefined ? canonicalAddress(a as string) : `${canonicalAddress(a as string)}/${len}`;
  }
  return f.join('|');
}

function check(t: Test, data: Buffer, expected?: string[]): { entries: number; abbreviated: number; full: number } {
  let entries = 0;
  let abbreviated = 0;
  let full = 0;
  let exact = 0;
  const got: string[] = [];
  for (const e of ribEntries(data)) {
    entries++;
    const attrs = decodePathAttributes(e.attrs, CTX, { mrtRibEntry: true });
    const re = encodePathAttributes(attrs, CTX);
    if (re.equals(e.attrs)) exact++;
    else t.equal(re.toString('hex'), e.attrs.toString('hex'), `${e.prefix}: attributes re-encode exactly`);
    const mp = attrs.find((a) => a.type === 'MP_REACH_NLRI');
    if (mp?.type === 'MP_REACH_NLRI') {
      if (mp.mrtAbbreviated) abbreviated++;
      else full++;
    }
    got.push(line(e, attrs));
  }
  t.equal(exact, entries, `all ${entries} attribute lists re-encode byte for byte`);
  if (expected) {
    const want = expected.map(canonicalLine);
    t.equal(got.length, want.length, 'as many route lines as bgpdump');
    const i = got.findIndex((g, k) => g !== want[k]);
    t.equal(i, -1, i < 0 ? 'every line equals bgpdump' : `first difference at ${i}:\n ours:    ${got[i]}\n bgpdump: ${want[i]}`);
  }
  return { entries, abbreviated, full };
}

if (!missingPrerequisite({ [`shared data (${mrtDir})`]: existsSync(mrtDir) }, '../shared is not checked out beside the repository')) {
  for (const name of ['bview.64k_stream_overflow.gz', 'bview.ipv4_unicast_add_path.gz', 'bview.ipv6_unicast_add_path.gz']) {
    t.test(`bgpdump ${name}: RIB entries equal bgpdump -m`, async (t) => {
      const data = gunzipSync(readFileSync(`${mrtDir}bgpdump/test_data/${name}`));
      const expected = gunzipSync(readFileSync(`${mrtDir}bgpdump/test_expect/${name}.bgp.gz`))
        .toString('utf8')
        .split('\n')
        .filter((l) => l.startsWith('TABLE_DUMP2'));
      const r = check(t, data, expected);
      t.ok(r.entries > 0, `entries: ${r.entries}`);
      if (name.startsWith('bview.64k')) t.ok(r.full > 0, `RIS writes the full MP_REACH_NLRI form (${r.full} entries)`);
    });
  }

  const samples: [string, 'abbreviated' | 'full' | 'none'][] = [
    ['openbgpd_rib_table-v2', 'abbreviated'],
    ['quagga_rib', 'full'],
    ['bird-mrtdump_rib', 'none'],
    ['bird6-mrtdump_rib', 'none'],
  ];
  for (const [name, form] of samples) {
    t.test(`mrtparse ${name}: every entry decodes and re-encodes; MP_REACH_NLRI form ${form}`, async (t) => {
      const r = check(t, readFileSync(`${mrtDir}mrtparse/${name}`));
      t.ok(r.entries > 0, `entries: ${r.entries}`);
      if (form === 'abbreviated') t.ok(r.abbreviated > 0 && r.full === 0, `abbreviated: ${r.abbreviated}`);
      if (form === 'full') t.ok(r.full > 0 && r.abbreviated === 0, `full: ${r.full}`);
      if (form === 'none') t.equal(r.abbreviated + r.full, 0, 'no MP_REACH_NLRI (README: some entries have no next hop at all)');
    });
  }
}
