/**
 * `herald decode` end to end through runDecode: usage errors, --hex, --summary, exit codes, gzip input, MRT records
 * built by hand (every supported type), and synthetic captures exercising session context from OPENs.
 */
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { KEEPALIVE, bgp4mpMessage, bgpMessage, ethernet, ipv4Tcp, mrtRecord, pcapFile, simpleUpdate } from './build.ts';
import { runCli } from './run.ts';


/** An OPEN with 4-octet AS (65) and ADD-PATH (69) for IPv4 unicast in `mode` (RFC 6793, RFC 7911). */
function open(asn: number, id: string, addPathMode?: number): Buffer {
  const caps: Buffer[] = [Buffer.from([1, 4, 0, 1, 0, 1])];
  const as4 = Buffer.from([65, 4, 0, 0, 0, 0]);
  as4.writeUInt32BE(asn, 2);
  caps.push(as4);
  if (addPathMode !== undefined) caps.push(Buffer.from([69, 4, 0, 1, 1, addPathMode]));
  const capBytes = Buffer.concat(caps);
  const params = Buffer.concat([Buffer.from([2, capBytes.length]), capBytes]);
  const head = Buffer.alloc(10);
  head[0] = 4;
  head.writeUInt16BE(asn > 65535 ? 23456 : asn, 1);
  head.writeUInt16BE(90, 3);
  Buffer.from(id.split('.').map(Number)).copy(head, 5);
  head[9] = params.length;
  return bgpMessage(1, Buffer.concat([head, params]));
}

/** UPDATE announcing 10.9.0.0/16 with path id `pathId` (ADD-PATH NLRI encoding) and a 4-octet AS_PATH. */
function addPathUpdate(pathId: number, asn: number): Buffer {
  const asPath = Buffer.alloc(6);
  asPath[0] = 2;
  asPath[1] = 1;
  asPath.writeUInt32BE(asn, 2);
  const attrs = Buffer.concat([Buffer.from([0x40, 1, 1, 0, 0x40, 2, 6]), asPath, Buffer.from([0x40, 3, 4, 192, 0, 2, 1])]);
  const nlri = Buffer.alloc(7);
  nlri.writeUInt32BE(pathId, 0);
  nlri[4] = 16;
  nlri[5] = 10;
  nlri[6] = 9;
  return bgpMessage(2, Buffer.concat([Buffer.from([0, 0, 0, attrs.length]), attrs, nlri]));
}

t.test('usage errors exit 2 with a message on stderr, never a stack trace', async (t) => {
  for (const argv of [[], ['--as2', '--as4', 'x'], ['--port', 'http', 'x'], ['--bogus', 'x'], ['a', 'b'], ['--hex', 'ff', 'file'], ['--add-path=ipv5', 'x']]) {
    const r = await runCli(argv);
    t.equal(r.code, 2, `${argv.join(' ')} → 2`);
    t.match(r.stderr, /^herald decode: /);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const bogus = await runCli(['--bogus', 'x']);
  t.match(bogus.stderr, /^herald decode: unknown option --bogus\n\nUsage: herald decode/, 'the option named alone, then the usage');
  const missing = await runCli(['/nonexistent/file.mrt']);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read \/nonexistent\/file.mrt: no such file/);
  const help = await runCli(['--help']);
  t.equal(help.code, 0);
  t.match(help.out, /Usage: herald decode/);
  const badHex = await runCli(['--hex', 'xyz']);
  t.equal(badHex.code, 2);
});

t.test('--hex decodes one message or a stream; framing errors are error lines and exit 1', async (t) => {
  const one = await runCli(['--hex', KEEPALIVE.toString('hex')]);
  t.equal(one.code, 0);
  t.same(one.lines, [{ offset: 0, type: 'KEEPALIVE' }]);
  const update = simpleUpdate([65001, 65002], '192.0.2.1', ['10.1.2'], false);
  const spaced = Buffer.concat([update, KEEPALIVE]).toString('hex').replace(/(..)/g, '$1 ');
  const stream = await runCli(['--hex', spaced, '--as2']);
  t.equal(stream.code, 0);
  t.equal(stream.lines.length, 2);
  t.match(stream.lines[0], { offset: 0, type: 'UPDATE', nlri: ['10.1.2.0/24'], origin: 'IGP', nextHop: '192.0.2.1', asPath: [{ type: 'AS_SEQUENCE', asns: [65001, 65002] }] });
  t.match(stream.lines[1], { offset: update.length, type: 'KEEPALIVE' });
  // Without --as2 the AS width is guessed: 2-octet first, so the same result.
  const guessed = await runCli(['--hex', Buffer.concat([update]).toString('hex')]);
  t.match(guessed.lines[0], { asPath: [{ asns: [65001, 65002] }] });
  const four = await runCli(['--hex', simpleUpdate([4200000000], '192.0.2.1', ['10.1.3']).toString('hex')]);
  t.match(four.lines[0], { asPath: [{ asns: [4200000000] }] }, 'a 4-octet AS_PATH is recognised without OPENs');
  const bad = Buffer.from(KEEPALIVE);
  bad[0] = 0;
  const r = await runCli(['--hex', Buffer.concat([bad, KEEPALIVE]).toString('hex')]);
  t.equal(r.code, 1);
  t.match(r.lines[0], { error: /Connection Not Synchronized/, offset: 0, code: 1, subcode: 1 });
  t.match(r.lines.at(-1), { offset: 19, type: 'KEEPALIVE' });
  const shortOpen = bgpMessage(1, Buffer.from([4]));
  const r2 = await runCli(['--hex', shortOpen.toString('hex')]);
  t.equal(r2.code, 1);
  t.match(r2.lines[0], { offset: 0, code: 1, subcode: 2 }, 'OPEN shorter than 29 octets: Bad Message Length');
});

t.test('MRT: every supported record type, gzip, errors and notes, --summary', async (t) => {
  const dir = t.testdir();
  const update = simpleUpdate([64512, 64513], '198.51.100.1', ['10.0.0', '10.0.1'], false);
  const update4 = simpleUpdate([4200000000], '198.51.100.1', ['10.0.2']);
  const state = Buffer.concat([bgp4mpMessage(true, 4200000000, 65000, Buffer.alloc(0)), Buffer.from([0, 5, 0, 6])]);
  // TABLE_DUMP_V2: PEER_INDEX_TABLE with one IPv4/AS4 peer, then a RIB_IPV4_UNICAST entry.
  const pit = Buffer.concat([Buffer.from([192, 0, 2, 9, 0, 4]), Buffer.from('view'), Buffer.from([0, 1, 0x02, 10, 0, 0, 1, 203, 0, 113, 5]), Buffer.from([0, 0, 0xfd, 0xe9])]);
  const ribAttrs = Buffer.from([0x40, 1, 1, 2, 0x40, 2, 6, 2, 1, 0, 0, 0xfd, 0xe9, 0x40, 3, 4, 203, 0, 113, 5]);
  const rib = Buffer.concat([Buffer.from([0, 0, 0, 7, 24, 192, 0, 2, 0, 1, 0, 0]), Buffer.from([0x65, 0x00, 0x00, 0x00]), Buffer.from([0, ribAttrs.length]), ribAttrs]);
  const badMessage = Buffer.from(KEEPALIVE);
  badMessage[5] = 0x00;
  const records = [
    mrtRecord(16, 1, bgp4mpMessage(false, 64512, 65000, update)),
    mrtRecord(17, 4, bgp4mpMessage(true, 4200000000, 65000, update4), 1700000001, 123456),
    mrtRecord(16, 5, state),
    mrtRecord(16, 4, bgp4mpMessage(true, 1, 2, badMessage)),
    mrtRecord(13, 1, pit),
    mrtRecord(13, 2, rib),
    mrtRecord(11, 0, Buffer.from('ospf')),
    mrtRecord(16, 4, bgp4mpMessage(true, 1, 2, KEEPALIVE)),
  ];
  const file = join(dir, 'dump');
  writeFileSync(file, gzipSync(Buffer.concat(records)));
  const r = await runCli([file]);
  t.equal(r.code, 1, 'one malformed record → exit 1');
  t.equal(r.lines.length, 8);
  t.match(r.lines[0], { offset: 0, timestamp: 1700000000, type: 'BGP4MP', subtype: 'BGP4MP_MESSAGE', peerAs: 64512, localAs: 65000, peerIp: '198.51.100.1', localIp: '198.51.100.2', message: { type: 'UPDATE', nlri: ['10.0.0.0/24', '10.0.1.0/24'], asPath: [{ asns: [64512, 64513] }] } });
  t.match(r.lines[1], { timestamp: 1700000001.123456, type: 'BGP4MP_ET', subtype: 'BGP4MP_MESSAGE_AS4', peerAs: 4200000000, message: { asPath: [{ asns: [4200000000] }] } });
  t.match(r.lines[2], { subtype: 'BGP4MP_STATE_CHANGE_AS4', oldState: 5, newState: 6, oldStateName: 'OpenConfirm', newStateName: 'Established' });
  const offsets = records.map((_, i) => records.slice(0, i).reduce((n, b) => n + b.length, 0));
  t.match(r.lines[3], { error: /Connection Not Synchronized/, offset: offsets[3], code: 1, subcode: 1, type: 'BGP4MP' });
  t.match(r.lines[4], { subtype: 'PEER_INDEX_TABLE', collectorBgpId: '192.0.2.9', viewName: 'view', peers: [{ index: 0, peerBgpId: '10.0.0.1', peerIp: '203.0.113.5', peerAs: 65001 }] });
  t.match(r.lines[5], { subtype: 'RIB_IPV4_UNICAST', sequence: 7, prefix: '192.0.2.0/24', entries: [{ peerIndex: 0, peerIp: '203.0.113.5', peerAs: 65001, originatedTime: 0x65000000, pathAttributes: { origin: 'INCOMPLETE', asPath: [{ asns: [65001] }], nextHop: '203.0.113.5' } }] });
  t.match(r.lines[6], { offset: offsets[6], type: 'OSPFv2', note: /not decoded/ });
  t.match(r.lines[7], { message: { type: 'KEEPALIVE' } });

  const s = await runCli(['--summary', file]);
  t.equal(s.code, 1);
  t.equal(s.lines.length, 2, 'the error line, then the summary');
  t.match(s.lines[0], { error: /Connection Not Synchronized/ });
  t.match(s.lines[1], {
    summary: {
      lines: 6,
      mrtRecords: { 'BGP4MP/BGP4MP_MESSAGE': 1, 'BGP4MP_ET/BGP4MP_MESSAGE_AS4': 1, 'TABLE_DUMP_V2/RIB_IPV4_UNICAST': 1 },
      messages: { UPDATE: 2, KEEPALIVE: 1 },
      attributes: { ORIGIN: 3, AS_PATH: 3, NEXT_HOP: 3 },
      ribEntries: 1,
      prefixes: { announced: 3, withdrawn: 0 },
      errors: 1,
      notes: 1,
    },
  });

  // A record whose Length runs past the end: an error line naming its offset, and reading stops there.
  const cut = join(dir, 'cut');
  const whole = Buffer.concat([records[0]!, records[7]!]);
  writeFileSync(cut, whole.subarray(0, whole.length - 3));
  const rc = await runCli([cut]);
  t.equal(rc.code, 1);
  t.equal(rc.lines.length, 2);
  t.match(rc.lines[1], { error: /truncated MRT record/, offset: records[0]!.length, code: null, subcode: null });

  const junk = join(dir, 'junk');
  writeFileSync(junk, Buffer.from('this is not BGP data at all'));
  const rj = await runCli([junk]);
  t.equal(rj.code, 1);
  t.match(rj.lines, [{ error: /junk is not a known format: expected a pcap or pcapng capture, an MRT dump or BGP messages in hex \(plain, gzip or bzip2\); its first octets are 74 68 69 73 /, offset: 0 }]);
  const empty = join(dir, 'empty.gz');
  writeFileSync(empty, gzipSync(Buffer.alloc(0)));
  const re = await runCli([empty]);
  t.equal(re.code, 0, 'an empty dump is not an error');
  t.same(re.lines, [{ note: 'input is empty', offset: 0 }]);
  const badGz = join(dir, 'bad.gz');
  writeFileSync(badGz, gzipSync(Buffer.from('x')).subarray(0, 12));
  const rg = await runCli([badGz]);
  t.equal(rg.code, 1);
  t.match(rg.lines[0], { error: /bad\.gz: gzip stream ends early \(unexpected end of file\)/ });
  const corrupt = join(dir, 'corrupt.gz');
  writeFileSync(corrupt, Buffer.concat([Buffer.from('1f8b0800000000000003', 'hex'), Buffer.from('garbage octets')]));
  const rcorrupt = await runCli([corrupt]);
  t.equal(rcorrupt.code, 1);
  t.match(rcorrupt.lines, [{ error: /corrupt\.gz: gzip data is corrupt: invalid block type/, offset: 0 }]);
  // Two layers are undone; a third is refused (it used to be passed on still compressed, as "neither pcap...").
  const mrt = Buffer.concat(records);
  const two = join(dir, 'two.gz.gz');
  writeFileSync(two, gzipSync(gzipSync(mrt)));
  const r2 = await runCli([two]);
  const r1 = await runCli([file]);
  t.same(r2.lines, r1.lines, 'two layers decode like one');
  t.ok(r2.lines.length > 0);
  const three = join(dir, 'three.gz.gz.gz');
  writeFileSync(three, gzipSync(gzipSync(gzipSync(mrt))));
  const r3 = await runCli([three]);
  t.equal(r3.code, 1);
  t.match(r3.lines[0], { error: 'too many compression layers (more than 2)' });
});

t.test('--hex with no hex digits is a usage error', async (t) => {
  for (const hex of ['-', '0x', '', ' : ']) {
    const r = await runCli(['--hex', hex]);
    t.equal(r.code, 2, `--hex "${hex}" → 2`);
    t.equal(r.stderr, 'herald decode: --hex: no hex digits\n');
    t.equal(r.out, '');
  }
});

t.test('pcap: OPENs negotiate 4-octet AS and ADD-PATH; other ports are found by their BGP header', async (t) => {
  const dir = t.testdir();
  const a = { src: '192.0.2.1', dst: '192.0.2.2', sport: 40000, dport: 179 };
  const b = { src: '192.0.2.2', dst: '192.0.2.1', sport: 179, dport: 40000 };
  const openA = open(4200000001, '1.1.1.1', 2); // A sends
  const openB = open(65002, '2.2.2.2', 1); // B receives
  const upd = addPathUpdate(77, 4200000001);
  let seqA = 1000;
  let seqB = 5000;
  const frames: Buffer[] = [];
  frames.push(ethernet(ipv4Tcp({ ...a, seq: seqA, syn: true })));
  frames.push(ethernet(ipv4Tcp({ ...b, seq: seqB, syn: true })));
  seqA++;
  seqB++;
  frames.push(ethernet(ipv4Tcp({ ...a, seq: seqA, payload: openA })));
  seqA += openA.length;
  frames.push(ethernet(ipv4Tcp({ ...b, seq: seqB, payload: openB })));
  // The UPDATE split over two segments, the second one first (out of order), plus a retransmission.
  frames.push(ethernet(ipv4Tcp({ ...a, seq: seqA + 10, payload: upd.subarray(10) })));
  frames.push(ethernet(ipv4Tcp({ ...a, seq: seqA, payload: upd.subarray(0, 10) })));
  frames.push(ethernet(ipv4Tcp({ ...a, seq: seqA, payload: upd.subarray(0, 10) })));
  const file = join(dir, 'session.pcap');
  writeFileSync(file, pcapFile(1, frames));
  const r = await runCli([file]);
  t.equal(r.code, 0);
  t.equal(r.lines.length, 3);
  t.match(r.lines[0], { frame: 3, src: '192.0.2.1:40000', dst: '192.0.2.2:179', type: 'OPEN', capabilities: [{ code: 1 }, { code: 65, asNumber: 4200000001 }, { code: 69 }] });
  t.match(r.lines[2], { frame: 5, timestamp: 1700000004.25, type: 'UPDATE', nlri: ['10.9.0.0/16'], nlriPathIds: [77], asPath: [{ asns: [4200000001] }] });

  // Mid-session capture on port 1179: found by its BGP header; the leading partial message is skipped with a note.
  const tail = Buffer.concat([upd.subarray(25), KEEPALIVE]);
  const mid = { ...a, sport: 1179, dport: 51000 };
  const frames6 = [ethernet(ipv4Tcp({ ...mid, seq: 9, payload: tail })), ethernet(ipv4Tcp({ ...mid, seq: 9 + tail.length, payload: KEEPALIVE }))];
  const file2 = join(dir, 'mid.pcap');
  writeFileSync(file2, pcapFile(101, frames6.map((f) => f.subarray(14, f.length - 4))));
  const r2 = await runCli([file2]);
  t.equal(r2.code, 0);
  t.match(r2.lines, [{ note: /skipped \d+ octets: capture starts inside the session/, frame: 1 }, { frame: 1, type: 'KEEPALIVE', src: '192.0.2.1:1179' }, { frame: 2, type: 'KEEPALIVE' }]);
  t.equal(r2.lines.length, 3);
});

t.test('BGP4MP session fields: each record keeps its own session; a short one is still an error naming the field', async (t) => {
  const update = simpleUpdate([65001], '192.0.2.1', ['10.0.0.0/8']);
  const a = bgp4mpMessage(true, 65001, 65000, update);
  const b = bgp4mpMessage(true, 65002, 65000, update);
  const other = Buffer.from(a);
  other[15] = 9; // Peer IP 198.51.100.9: same ASes, another address
  const short = a.subarray(0, 18); // cut inside the Local IP Address
  const file = join(t.testdirName, 'sessions.mrt');
  t.testdir({});
  writeFileSync(file, Buffer.concat([a, b, a, other, short, a].map((body) => mrtRecord(16, 4, body))));
  const rc = await runCli([file]);
  t.equal(rc.code, 1, 'the short record is an error');
  t.same(
    rc.lines.map((l) => (l.error === undefined ? `${l.peerAs} ${l.peerIp}` : 'error')),
    ['65001 198.51.100.1', '65002 198.51.100.1', '65001 198.51.100.1', '65001 198.51.100.9', 'error', '65001 198.51.100.1'],
  );
  t.match(rc.lines[4], { error: /truncated Local IP Address/, code: null, subcode: null, type: 'BGP4MP', subtype: 'BGP4MP_MESSAGE_AS4' });
});
