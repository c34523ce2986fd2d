/**
 * UPDATEs captured from real and crafted sessions (tcpdump's regression captures, ../shared/data/bgp/pcap/tcpdump/,
 * BSD-3-Clause) checked against tcpdump's own expected decoding (the `.out` file next to each capture):
 * attribute flags octet (O/T/P/E), ORIGIN, AS_PATH, AS4_PATH, NEXT_HOP, MED, LOCAL_PREF, COMMUNITIES, ORIGINATOR_ID,
 * CLUSTER_LIST, LARGE_COMMUNITY, EXTENDED_COMMUNITIES (link bandwidth, route target, origin validation state),
 * MP_REACH/MP_UNREACH next hops and prefixes, withdrawn and announced routes — and every UPDATE re-encodes byte for
 * byte.
 *
 * Messages are found by scanning the capture for the 16-octet marker (all these captures carry whole messages per
 * TCP segment; the count is asserted against the number tcpdump printed). AS number width: a capture mixes
 * 2- and 4-octet sessions (bgp-4byte-asn), so each UPDATE is decoded with the width whose AS_PATH text equals
 * tcpdump's (tcpdump prints what the session used).
 */
import t from 'tap';
import type { Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { walkAttributes } from '../../../bgp/codec/attributes.ts';
import { formatAsPath } from '../../../bgp/codec/as-path.ts';
import { extendedCommunityKind, extendedCommunityView, linkBandwidthOf } from '../../../bgp/codec/ext-communities.ts';
import type { ExtendedCommunity } from '../../../bgp/codec/types.ts';
import type { CodecContext, PathAttribute, UpdateMessage } from '../../../bgp/codec/types.ts';
import { decodeUpdate, encodeUpdate } from '../../../bgp/codec/update.ts';
import { BgpError } from '../../../bgp/errors.ts';
import { missingPrerequisite } from '../../helpers/prereq.ts';

const dir = fileURLToPath(new URL('../../../../shared/data/bgp/pcap/tcpdump/', import.meta.url));

/** Whole UPDATE messages found in a capture file, in order. */
function scanUpdates(file: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + 19 <= file.length; i++) {
    let marker = true;
    for (let k = 0; k < 16 && marker; k++) marker = file[i + k] === 0xff;
    if (!marker) continue;
    const len = file.readUInt16BE(i + 16);
    if (len < 19 || len > 4096 || i + len > file.length) continue;
    if (file[i + 18] === 2) out.push(file.subarray(i, i + len));
    i += len - 1;
  }
  return out;
}

interface OutAttr {
  code: number;
  flags: string;
  value: string;
  /** Indented lines under the attribute. */
  sub: string[];
}
interface OutUpdate {
  attrs: OutAttr[];
  withdrawn: string[];
  updated: string[];
}

/** The UPDATE blocks of a tcpdump -v .out file: top-level attributes ("\t  Name (code), length: n, Flags [..]: v"). */
function parseOut(text: string): OutUpdate[] {
  const updates: OutUpdate[] = [];
  let cur: OutUpdate | undefined;
  let section: 'attrs' | 'withdrawn' | 'updated' = 'attrs';
  for (const line of text.split('\n')) {
    if (/^\tUpdate Message \(2\)/.test(line)) {
      cur = { attrs: [], withdrawn: [], updated: [] };
      updates.push(cur);
      section = 'attrs';
      continue;
    }
    if (!cur) continue;
    if (!line.startsWith('\t ')) {
      cur = undefined;
      continue;
    }
    const top = /^\t {2}(\S.*)$/.exec(line)?.[1];
    if (top !== undefined) {
      if (top.startsWith('Withdrawn routes:')) section = 'withdrawn';
      else if (top.startsWith('Updated routes:')) section = 'updated';
      else if (top.startsWith('End-of-Rib')) section = 'attrs';
      else {
        const m = /^.*\((\d+)\), length: \d+, Flags \[([A-Z]*)\]:\s?(.*)$/.exec(top);
        if (m) {
          cur.attrs.push({ code: Number(m[1]), flags: m[2] as string, value: (m[3] as string).trim(), sub: [] });
          section = 'attrs';
        }
      }
      continue;
    }
    const inner = line.trim();
    if (section === 'withdrawn') cur.withdrawn.push(inner);
    else if (section === 'updated') cur.updated.push(inner);
    else cur.attrs[cur.attrs.length - 1]?.sub.push(inner);
  }
  return updates;
}

function flagLetters(flags: number): string {
  return (flags & 0x80 ? 'O' : '') + (flags & 0x40 ? 'T' : '') + (flags & 0x20 ? 'P' : '') + (flags & 0x10 ? 'E' : '');
}

function code(a: PathAttribute): number {
  const codes: Record<string, number> = {
    ORIGIN: 1, AS_PATH: 2, NEXT_HOP: 3, MULTI_EXIT_DISC: 4, LOCAL_PREF: 5, ATOMIC_AGGREGATE: 6, AGGREGATOR: 7,
    COMMUNITIES: 8, ORIGINATOR_ID: 9, CLUSTER_LIST: 10, MP_REACH_NLRI: 14, MP_UNREACH_NLRI: 15, EXTENDED_COMMUNITIES: 16,
    AS4_PATH: 17, AS4_AGGREGATOR: 18, IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY: 25, LARGE_COMMUNITY: 32,
  };
  return a.type === 'UNKNOWN' ? a.typeCode : (codes[a.type] as number);
}

/**
 * tcpdump's line for the extended communities these captures hold, written from our decoded fields (print-bgp.c's
 * wording: name, type/sub-type in hex, transitivity, value); undefined for kinds no capture holds.
 */
function tcpdumpExtCommunity(c: ExtendedCommunity): string | undefined {
  const code = `0x${c.value.subarray(0, 2).toString('hex')}`;
  const v = extendedCommunityView(c);
  const lb = linkBandwidthOf(c);
  if (lb) return `link-BW (${code}), Flags [${lb.transitive ? 'none' : 'non-transitive'}]: bandwidth: ${((lb.bytesPerSecond * 8) / 1e6).toFixed(3)} Mbps`;
  if (extendedCommunityKind(c) === 'route-target' && v.layout === 'two-octet-as') {
    const l = v.localAdministrator;
    return `target (${code}), Flags [${v.transitive ? 'none' : 'non-transitive'}]: ${v.globalAdministrator}:${l} (= ${l >>> 24}.${(l >>> 16) & 255}.${(l >>> 8) & 255}.${l & 255})`;
  }
  if (v.layout === 'opaque' && v.subtype === 0 && !v.transitive) {
    return `origin-validation-state (${code}), Flags [non-transitive]: ovs: ${['valid', 'not found', 'invalid'][v.value[5] as number] ?? '?'}`;
  }
  return undefined;
}

let extCommunitiesCompared = 0;

const entryText = (e: { prefix: string; pathId?: number }): string => (e.pathId === undefined ? e.prefix : `${e.prefix}   Path Id: ${e.pathId}`);

/** Compares one decoded UPDATE with tcpdump's block. */
function compare(tt: Test, label: string, msg: UpdateMessage, want: OutUpdate): void {
  tt.same(msg.pathAttributes.map((a) => [code(a), flagLetters(a.flags)]), want.attrs.map((a) => [a.code, a.flags]), `${label}: attribute codes and flags in order`);
  for (const [i, w] of want.attrs.entries()) {
    const a = msg.pathAttributes[i];
    if (!a) continue;
    let got: string | undefined;
    switch (a.type) {
      case 'ORIGIN':
        got = ['IGP', 'EGP', 'Incomplete'][a.origin];
        break;
      case 'AS_PATH':
      case 'AS4_PATH':
        got = a.segments.length === 0 ? 'empty' : formatAsPath(a.segments);
        break;
      case 'NEXT_HOP':
        got = a.nextHop;
        break;
      case 'MULTI_EXIT_DISC':
        got = String(a.med);
        break;
      case 'LOCAL_PREF':
        got = String(a.localPref);
        break;
      case 'COMMUNITIES':
        got = a.communities.map((c) => `${c >>> 16}:${c & 0xffff}`).join(', ');
        break;
      case 'ORIGINATOR_ID':
        got = a.originatorId;
        break;
      case 'CLUSTER_LIST':
        got = a.clusterIds.join(' ');
        break;
      case 'LARGE_COMMUNITY':
        tt.equal(a.largeCommunities.map((c) => c.join(':')).join(', '), w.sub.join(', '), `${label}: LARGE_COMMUNITY`);
        break;
      case 'EXTENDED_COMMUNITIES':
        tt.same(a.extendedCommunities.map(tcpdumpExtCommunity), w.sub, `${label}: EXTENDED_COMMUNITIES`);
        extCommunitiesCompared += a.extendedCommunities.length;
        break;
      case 'MP_REACH_NLRI':
        if (a.raw) break;
        tt.equal(`nexthop: ${a.nextHops.join(', ')}`, w.sub[1]?.replace(/, nh-length.*$/, ''), `${label}: MP_REACH_NLRI next hops`);
        tt.same(a.nlri.map(entryText), w.sub.slice(2), `${label}: MP_REACH_NLRI prefixes`);
        break;
      case 'MP_UNREACH_NLRI':
        if (a.raw) break;
        tt.same(a.withdrawnRoutes.length ? a.withdrawnRoutes.map(entryText) : ['End-of-Rib Marker (empty NLRI)'], w.sub.slice(1), `${label}: MP_UNREACH_NLRI prefixes`);
        break;
      default:
        break;
    }
    if (got !== undefined) tt.equal(got, w.value, `${label}: ${a.type} value`);
  }
  tt.same(msg.withdrawnRoutes.map(entryText), want.withdrawn, `${label}: withdrawn routes`);
  tt.same(msg.nlri.map(entryText), want.updated, `${label}: announced routes`);
}

const AS4: CodecContext = { fourOctetAs: true, extendedMessage: false, addPath: {} };
const AS2: CodecContext = { fourOctetAs: false, extendedMessage: false, addPath: {} };

/** The AS width whose AS_PATH text equals tcpdump's; 4-octet when the UPDATE has no AS_PATH. */
function pickContext(body: Buffer, want: OutUpdate): CodecContext {
  const asPath = want.attrs.find((a) => a.code === 2)?.value;
  if (asPath === undefined) return AS4;
  for (const ctx of [AS4, AS2]) {
    try {
      const a = decodeUpdate(body, ctx).message.pathAttributes.find((x) => x.type === 'AS_PATH');
      if (a?.type === 'AS_PATH' && (a.segments.length === 0 ? 'empty' : formatAsPath(a.segments)) === asPath) return ctx;
    } catch {
      // try the other width
    }
  }
  return AS4;
}

const captures: [string, string, number][] = [
  ['mpbgp-linklocal-nexthop.pcap', 'mpbgp-linklocal-nexthop.out', 1],
  ['bgp-large-community.pcap', 'bgp-large-community.out', 5],
  ['bgp-4byte-asn.pcap', 'bgp-4byte-asn.out', 10],
  ['bgp-link-bw-extcommunity.pcapng', 'bgp-link-bw-extcommunity.out', 6],
  ['bgp-ovs.pcapng', 'bgp-ovs.out', 4],
  ['bgp-aigp.pcap', 'bgp-aigp.out', 2],
  ['bgp_vpn_attrset.pcap', 'bgp_vpn_attrset.out', 1],
];

if (!missingPrerequisite({ [`shared data (${dir})`]: existsSync(dir) }, '../shared is not checked out beside the repository')) {
  let total = 0;
  for (const [pcap, out, count] of captures) {
    t.test(`${pcap}: ${count} UPDATEs equal tcpdump's decoding and re-encode exactly`, async (tt) => {
      const messages = scanUpdates(readFileSync(dir + pcap));
      const blocks = parseOut(readFileSync(dir + out, 'utf8'));
      tt.equal(messages.length, count, 'UPDATEs in the capture');
      tt.equal(blocks.length, count, 'UPDATE blocks in the .out');
      messages.forEach((m, i) => {
        const body = m.subarray(19);
        const want = blocks[i] as OutUpdate;
        const ctx = pickContext(body, want);
        const r = decodeUpdate(body, ctx);
        tt.equal(encodeUpdate(r.message, ctx).toString('hex'), body.toString('hex'), `#${i + 1}: encode(decode(b)) == b`);
        compare(tt, `#${i + 1}`, r.message, want);
        total++;
      });
    });
  }

  t.test('bgp-addpath.pcap (crafted, ADD-PATH everywhere): path ids as tcpdump prints; RFC 7606 outcome', async (tt) => {
    const [m] = scanUpdates(readFileSync(`${dir}bgp-addpath.pcap`));
    const want = parseOut(readFileSync(`${dir}bgp-addpath.out`, 'utf8'))[0] as OutUpdate;
    tt.ok(m, 'one UPDATE');
    const body = (m as Buffer).subarray(19);
    const ctx: CodecContext = { fourOctetAs: false, extendedMessage: false, addPath: { ipv4: true, ipv6: true } };
    // The capture was crafted for a printer: NEXT_HOP of length 0, MP attributes flagged well-known (Flags [T]) and
    // each MP attribute twice. Those are session-fatal under RFC 7606 §3 c / §3 g; the first one met is MP_REACH_NLRI's
    // flags (3/4, data = the attribute).
    try {
      decodeUpdate(body, ctx);
      tt.fail('should throw');
    } catch (e) {
      tt.ok(e instanceof BgpError);
      tt.match(e, { code: 3, subcode: 4 });
      tt.equal((e as BgpError).data[1], 14, 'data is the MP_REACH_NLRI attribute');
    }
    const wl = body.readUInt16BE(0);
    const al = body.readUInt16BE(2 + wl);
    const walk = walkAttributes(body, 4 + wl, 4 + wl + al, ctx);
    tt.same(
      walk.issues.map((i) => [i.typeCode, i.subcode, i.action]),
      [
        [3, 5, 'treat-as-withdraw'],
        [14, 4, 'session-reset'],
        [15, 4, 'session-reset'],
        [14, 1, 'session-reset'],
        [15, 1, 'session-reset'],
      ],
      'every problem, in order',
    );
    // The withdrawn routes and NLRI with their path ids, as tcpdump prints them.
    const ok = decodeUpdate(Buffer.concat([body.subarray(0, 2 + wl), Buffer.from([0, 0]), body.subarray(4 + wl + al)]), ctx);
    tt.same(ok.message.withdrawnRoutes.map(entryText), want.withdrawn);
    tt.same(ok.message.nlri.map(entryText), want.updated);
  });

  t.test('counts', async (tt) => {
    tt.equal(total, 29, 'captured UPDATEs compared with tcpdump');
    // bgp-link-bw-extcommunity: 6 link bandwidth (0x4004); bgp-ovs: 4 origin validation states; bgp_vpn_attrset: 1 target.
    tt.equal(extCommunitiesCompared, 11, "extended communities compared with tcpdump's text");
  });
}
