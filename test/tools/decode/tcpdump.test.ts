/**
 * herald decode against tcpdump's expected output (`tcpdump -# -n -r FILE -v`, the `.out` files next to the captures
 * in shared/data/bgp/pcap/tcpdump). The text layout differs between tcpdump versions, so only values are compared:
 * per frame and per message, the message type, ORIGIN, AS_PATH and AS4_PATH numbers, NEXT_HOP, MED, LOCAL_PREF,
 * COMMUNITIES, LARGE_COMMUNITY, ORIGINATOR_ID, CLUSTER_LIST, announced and withdrawn unicast prefixes (with ADD-PATH
 * path ids), MP_REACH next hops, OPEN fields and capability codes, NOTIFICATION code/subcode and shutdown text.
 */
import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { decodeCapture } from '../../../tools/decode/stream.ts';
import { CollectingSink } from '../../../tools/decode/sink.ts';
import { SHARED_BGP, SHARED_PRESENT, filesUnder } from './shared.ts';
import { skipUnless } from '../../helpers/prereq.ts';

type Json = Record<string, unknown>;

const TYPE_CODE: Record<string, number> = { OPEN: 1, UPDATE: 2, NOTIFICATION: 3, KEEPALIVE: 4, 'ROUTE-REFRESH': 5 };
const WELL_KNOWN: Record<string, string> = { NO_EXPORT: '65535:65281', NO_ADVERTISE: '65535:65282', NO_EXPORT_SUBCONFED: '65535:65283' };

/** Expands IPv6 addresses to 8 full groups so that both sides' spellings compare equal. */
function norm(s: string): string {
  return s.replace(/[0-9a-f]*(?::[0-9a-f]*){2,7}/g, (addr) => {
    const [head = '', tail = ''] = addr.split('::');
    const h = head ? head.split(':') : [];
    const tl = addr.includes('::') && tail ? tail.split(':') : [];
    const groups = addr.includes('::') ? [...h, ...Array(8 - h.length - tl.length).fill('0'), ...tl] : h;
    return groups.map((g) => g.padStart(4, '0')).join(':');
  });
}

interface Msg {
  frame: number;
  facts: string[];
}

/** Facts per message from a tcpdump -v .out text. */
function parseOut(text: string): Msg[] {
  const msgs: Msg[] = [];
  let frame = 0;
  let cur: Msg | undefined;
  let section: 'announce' | 'withdraw' | undefined;
  let inLarge = false;
  let unicastMp = false;
  for (const line of text.split('\n')) {
    const fh = /^\s{0,5}(\d+)\s+\d{4}-\d\d-\d\d /.exec(line);
    if (fh) {
      frame = Number(fh[1]);
      cur = undefined;
      continue;
    }
    const mh = /^\t[A-Z][\w -]* Message \((\d)\), length: \d+/.exec(line);
    if (mh) {
      cur = { frame, facts: [`type:${mh[1]}`] };
      msgs.push(cur);
      section = undefined;
      inLarge = false;
      const n = /Notification Message \(3\), length: \d+, [^(]*\((\d+)\),? subcode [^(]*\((\d+)\)/.exec(line);
      if (n) cur.facts.push(`notification:${n[1]}/${n[2]}`);
      const sc = /Shutdown Communication \(length: \d+\): "(.*)"/.exec(line);
      if (sc) cur.facts.push(`shutdown:${sc[1]}`);
      continue;
    }
    if (!cur) continue;
    const open = /Version \d, my AS (\d+), Holdtime (\d+)s, ID ([\d.]+)/.exec(line);
    if (open) {
      cur.facts.push(`myAs:${open[1]}`, `holdTime:${open[2]}`, `id:${open[3]}`);
      continue;
    }
    const cap = /^\t\s+(\S[^:]*?) \((\d+)\), length: \d+$/.exec(line);
    if (cap && cur.facts[0] === 'type:1' && !/Option /.test(line)) {
      cur.facts.push(`cap:${cap[2]}`);
      continue;
    }
    // Top-level attributes only (tab + 2 spaces); deeper ones sit inside ATTR_SET, which herald keeps raw.
    const attr = /^\t {2}([A-Za-z][\w -]*?) \((\d+)\), length: \d+, Flags \[\w*\]: ?(.*)$/.exec(line);
    if (attr) {
      const [, , code, value = ''] = attr;
      inLarge = code === '32';
      section = undefined;
      unicastMp = false;
      const v = value.trim();
      switch (code) {
        case '1':
          cur.facts.push(`origin:${v.toLowerCase()}`);
          break;
        case '2':
        case '17':
          cur.facts.push(`${code === '2' ? 'asPath' : 'as4Path'}:${(v.match(/\d+/g) ?? []).join(' ')}`);
          break;
        case '3':
          cur.facts.push(`nextHop:${v}`);
          break;
        case '4':
          cur.facts.push(`med:${v}`);
          break;
        case '5':
          cur.facts.push(`localPref:${v}`);
          break;
        case '8':
          for (const c of v.split(/,\s*/)) if (c) cur.facts.push(`community:${WELL_KNOWN[c] ?? c}`);
          break;
        case '9':
          cur.facts.push(`originatorId:${v}`);
          break;
        case '10':
          for (const c of v.split(/[\s,]+/)) if (c) cur.facts.push(`cluster:${c}`);
          break;
        case '14':
          section = 'announce';
          break;
        case '15':
          section = 'withdraw';
          break;
      }
      if (inLarge) for (const lc of v.match(/\d+:\d+:\d+/g) ?? []) cur.facts.push(`large:${lc}`);
      continue;
    }
    if (inLarge) {
      for (const lc of line.match(/\d+:\d+:\d+/g) ?? []) cur.facts.push(`large:${lc}`);
      continue;
    }
    if (/^\s+Withdrawn routes:/.test(line)) {
      section = 'withdraw';
      continue;
    }
    if (/^\s+Updated routes:/.test(line)) {
      section = 'announce';
      continue;
    }
    const afi = /AFI: IPv[46] \(\d\), SAFI: (?:Unicast|Multicast) \((\d+)\)\s*$/.exec(line);
    if (/AFI: .*SAFI:/.test(line)) {
      unicastMp = afi !== null;
      continue;
    }
    const nh = /^\s+nexthop: (.*?), nh-length/.exec(line);
    if (nh && unicastMp) {
      for (const a of (nh[1] ?? '').split(/,\s*/)) cur.facts.push(`mpNextHop:${norm(a)}`);
      continue;
    }
    const p = /^\s+([0-9a-f.:]+\/\d+)(?:\s+Path Id: (\d+))?\s*$/.exec(line);
    if (p && section) {
      cur.facts.push(`${section}:${norm(p[1] ?? '')}${p[2] !== undefined ? `#${p[2]}` : ''}`);
    }
  }
  return msgs;
}

/** The same facts from herald's JSON line of one message. */
function heraldFacts(m: Json): string[] {
  const f: string[] = [`type:${TYPE_CODE[m.type as string] ?? 2}`];
  if (m.type === 'OPEN') {
    f.push(`myAs:${m.myAutonomousSystem}`, `holdTime:${m.holdTime}`, `id:${m.bgpIdentifier}`);
    for (const c of m.capabilities as Json[]) f.push(`cap:${c.code}`);
  }
  if (m.type === 'NOTIFICATION') f.push(`notification:${m.errorCode}/${m.errorSubcode}`);
  if (typeof m.shutdownCommunication === 'string') f.push(`shutdown:${m.shutdownCommunication}`);
  if (m.type !== undefined && m.type !== 'UPDATE') return f;
  if (m.origin) f.push(`origin:${String(m.origin).toLowerCase()}`);
  const asns = (segs: unknown): string => ((segs as { asns: number[] }[]) ?? []).flatMap((s) => s.asns).join(' ');
  if (m.asPath) f.push(`asPath:${asns(m.asPath)}`);
  if (m.as4Path) f.push(`as4Path:${asns(m.as4Path)}`);
  if (m.nextHop) f.push(`nextHop:${m.nextHop}`);
  if (m.med !== undefined) f.push(`med:${m.med}`);
  if (m.localPref !== undefined) f.push(`localPref:${m.localPref}`);
  for (const c of (m.communities as string[]) ?? []) f.push(`community:${c}`);
  for (const c of (m.largeCommunities as string[]) ?? []) f.push(`large:${c}`);
  if (m.originatorId) f.push(`originatorId:${m.originatorId}`);
  for (const c of (m.clusterList as string[]) ?? []) f.push(`cluster:${c}`);
  const add = (kind: string, prefixes: unknown, ids: unknown): void => {
    ((prefixes as string[]) ?? []).forEach((p, i) => f.push(`${kind}:${norm(p)}${ids ? `#${(ids as number[])[i]}` : ''}`));
  };
  add('withdraw', m.withdrawnRoutes, m.withdrawnPathIds);
  add('announce', m.nlri, m.nlriPathIds);
  const reach = m.mpReach as Json | undefined;
  if (reach) {
    add('announce', reach.nlri, reach.nlriPathIds);
    if (!reach.raw) for (const a of (reach.nextHops as string[]) ?? []) f.push(`mpNextHop:${norm(a)}`);
  }
  const unreach = m.mpUnreach as Json | undefined;
  if (unreach) add('withdraw', unreach.withdrawnRoutes, unreach.withdrawnPathIds);
  return f;
}

// Facts herald knowingly reports differently (documented in docs/decode.md). Key: file name; value: count.
// - bgp-addpath.pcap: its crafted MP_REACH_NLRI has flags 0x40 (not Optional); herald's codec rejects the UPDATE
//   with 3/4 Attribute Flags Error (RFC 4271 §6.3), tcpdump prints it. All 18 values of that message are missing.
const KNOWN_MISSING: Record<string, number> = { 'bgp-addpath.pcap': 18 };
const KNOWN_FEWER_MESSAGES: Record<string, number> = { 'bgp-addpath.pcap': 1 };

t.test('tcpdump -v expected output, value by value', { skip: skipUnless({ [`shared data at ${SHARED_BGP}`]: SHARED_PRESENT }, 'the shared data folder sits beside the repository (../shared/data/bgp)') }, async (t) => {
  const dir = join(SHARED_BGP, 'pcap/tcpdump');
  const captures = filesUnder(dir).filter((f) => /\.pcap(ng)?$/.test(f) && !f.includes('/malformed/'));
  t.equal(captures.length, 22, 'all 22 non-malformed tcpdump captures');
  let totalFacts = 0;
  for (const file of captures) {
    const outFile = file.replace(/\.pcap(ng)?$/, '.out');
    t.ok(existsSync(outFile), `${basename(outFile)} exists`);
    const expected = parseOut(readFileSync(outFile, 'utf8'));
    const sink = new CollectingSink();
    // bgp-addpath.pcap has no OPEN: tcpdump is told nothing either, but its crafted UPDATE carries path ids.
    decodeCapture(readFileSync(file), sink, basename(file) === 'bgp-addpath.pcap' ? { addPath: { ipv4: true, ipv6: true } } : {});
    const byFrame = new Map<number, Json[]>();
    for (const l of sink.lines) {
      const list = byFrame.get(l.frame as number) ?? [];
      list.push(l);
      byFrame.set(l.frame as number, list);
    }
    const seen = new Map<number, number>();
    let facts = 0;
    let matched = 0;
    const missing: string[] = [];
    for (const m of expected) {
      const i = seen.get(m.frame) ?? 0;
      seen.set(m.frame, i + 1);
      const mine = byFrame.get(m.frame)?.[i];
      const have = new Set(mine ? heraldFacts(mine) : []);
      for (const fact of m.facts) {
        facts++;
        if (have.has(fact)) matched++;
        else missing.push(`frame ${m.frame} #${i}: ${fact}`);
      }
    }
    const known = KNOWN_MISSING[basename(file)] ?? 0;
    t.equal(matched, facts - known, `${basename(file)}: ${matched} of ${facts} values match${missing.length ? `; missing ${missing.slice(0, 4).join(', ')}` : ''}`);
    t.equal(sink.lines.length, expected.length - (KNOWN_FEWER_MESSAGES[basename(file)] ?? 0), `${basename(file)}: ${sink.lines.length} messages, tcpdump shows ${expected.length}`);
    totalFacts += matched;
  }
  t.equal(totalFacts, 543, `${totalFacts} values compared equal`);
});
