/**
 * Real messages from other implementations.
 * 1. Copied fixtures test/fixtures/bgp/real-*.hex (tcpdump and ExaBGP, BSD-3-Clause; see the fixtures README):
 *    decoded values checked against tcpdump's own expected output (.out) / ExaBGP's JSON, exact re-encode, framer.
 * 2. Every OPEN, NOTIFICATION, KEEPALIVE and ROUTE-REFRESH found in ../shared/data/bgp (captures, MRT files and
 *    ExaBGP vectors, scanned for the marker) decodes and re-encodes byte for byte.
 */
import t from 'tap';
import type { Test } from 'tap';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeMessage, encodeMessage } from '../../../bgp/codec/message.ts';
import { messageToJson } from '../../../bgp/codec/json.ts';
import { DEFAULT_CONTEXT } from '../../../bgp/codec/types.ts';
import type { Capability, OpenMessage } from '../../../bgp/codec/types.ts';
import { MessageFramer } from '../../../bgp/wire/framer.ts';
import { readHexFixture } from '../../helpers/hex.ts';

const FIX = join(import.meta.dirname, '../../fixtures/bgp');
const SHARED = join(import.meta.dirname, '../../../../shared/data/bgp');
const ctx = DEFAULT_CONTEXT;

function quad(t: Test, bytes: Buffer): ReturnType<typeof decodeMessage> {
  const msg = decodeMessage(bytes, ctx);
  t.equal(encodeMessage(msg, ctx).toString('hex'), bytes.toString('hex'), 'encode(decode(b)) == b');
  t.same(decodeMessage(encodeMessage(msg, ctx), ctx), msg, 'decode(encode(m)) == m');
  const out = new MessageFramer().push(bytes);
  t.equal(out.length, 1, 'framer yields one message');
  t.same(messageToJson(msg), JSON.parse(JSON.stringify(messageToJson(msg))), 'JSON form is plain data');
  return msg;
}

const capTypes = (o: OpenMessage): string[] => o.capabilities.map((c: Capability) => (c.type === 'Unknown' ? `Unknown(${c.code})` : c.type));

t.test('real fixtures are present', async (t) => {
  const n = readdirSync(FIX).filter((f) => f.startsWith('real-') && f.endsWith('.hex')).length;
  t.equal(n, 6, 'six real-*.hex fixtures');
});

t.test('tcpdump bgp-extended-optional-parameters-length: RFC 9072 OPEN', async (t) => {
  const open = quad(t, readHexFixture(join(FIX, 'real-tcpdump-open-rfc9072.hex')).bytes) as OpenMessage;
  t.match(open, { type: 'OPEN', version: 4, myAutonomousSystem: 174, holdTime: 180, bgpIdentifier: '6.6.6.6' });
  t.equal(open.extendedOptionalParameters, true);
  t.equal(open.parameterLayout, 'perCapability');
  t.same(capTypes(open), [
    'Multiprotocol',
    'Multiprotocol',
    'RouteRefreshCisco',
    'RouteRefresh',
    'EnhancedRouteRefresh',
    'FourOctetAs',
    'ExtendedMessage',
    'AddPath',
    'Fqdn',
    'GracefulRestart',
    'Unknown(71)',
  ]);
  t.same(open.capabilities[7], { type: 'AddPath', families: [{ afi: 1, safi: 1, sendReceive: 1 }, { afi: 2, safi: 1, sendReceive: 1 }] });
  t.same(open.capabilities[8], { type: 'Fqdn', hostname: 'exit1-debian-11', domainName: '' });
  t.same(open.capabilities[9], { type: 'GracefulRestart', restarting: false, notification: false, restartTimeSec: 120, families: [] });
});

t.test('tcpdump bgp-enhanced-route-refresh: FRR-style OPEN', async (t) => {
  const open = quad(t, readHexFixture(join(FIX, 'real-tcpdump-open-enhanced-route-refresh.hex')).bytes) as OpenMessage;
  t.match(open, { myAutonomousSystem: 65001, holdTime: 180, bgpIdentifier: '192.168.10.68' });
  t.same(open.capabilities[5], { type: 'ExtendedMessage' });
  t.same(open.capabilities[7], { type: 'Fqdn', hostname: 'exit1-debian-9', domainName: '' });
});

t.test('tcpdump bgp-4byte-asn: AS_TRANS with the 4-octet AS capability, GR with R and N bits', async (t) => {
  const open = quad(t, readHexFixture(join(FIX, 'real-tcpdump-open-4byte-asn.hex')).bytes) as OpenMessage;
  t.equal(open.myAutonomousSystem, 23456);
  t.same(open.capabilities[3], { type: 'FourOctetAs', asNumber: 0xa4c46652 });
  t.same(open.capabilities[2], { type: 'GracefulRestart', restarting: true, notification: true, restartTimeSec: 300, families: [] });
});

t.test('ExaBGP conf-hostname: FQDN capability and per-capability parameters', async (t) => {
  const open = quad(t, readHexFixture(join(FIX, 'real-exabgp-open-hostname.hex')).bytes) as OpenMessage;
  t.same(open.capabilities[3], { type: 'Fqdn', hostname: 'my-host-name', domainName: 'my-domain-name.com' });
  t.same(messageToJson(open).capabilities, [
    { code: 1, name: 'Multiprotocol Extensions', afi: 1, safi: 1, family: 'ipv4-unicast' },
    { code: 65, name: 'Support for 4-octet AS number', asNumber: 65533 },
    { code: 6, name: 'BGP Extended Message' },
    { code: 73, name: 'FQDN', hostname: 'my-host-name', domainName: 'my-domain-name.com' },
  ]);
});

t.test('tcpdump bgp-shutdown-communication: Cease 6/2 with text', async (t) => {
  const msg = quad(t, readHexFixture(join(FIX, 'real-tcpdump-notification-shutdown.hex')).bytes);
  t.match(msg, { type: 'NOTIFICATION', errorCode: 6, errorSubcode: 2, shutdownCommunication: 'This is a test of the shutdown communication system.' });
});

t.test('tcpdump bgp-orf: ROUTE-REFRESH with ORF entries', async (t) => {
  const msg = quad(t, readHexFixture(join(FIX, 'real-tcpdump-route-refresh-orf.hex')).bytes);
  t.match(msg, { type: 'ROUTE-REFRESH', afi: 1, subtype: 0, safi: 1 });
  t.ok(msg.type === 'ROUTE-REFRESH' && msg.extra && msg.extra.length === 28, '28 octets of ORF data kept');
});

function walk(d: string): string[] {
  return readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const skipShared = existsSync(SHARED) ? false : `../shared/data/bgp is absent (${SHARED}); CI has it`;

t.test('every non-UPDATE message in ../shared/data/bgp round-trips', { skip: skipShared }, async (t) => {
  const marker = Buffer.alloc(16, 0xff);
  const seen = new Map<string, string>();
  for (const f of walk(SHARED)) {
    if (f.includes('/malformed/') || /\.(gz|bz2|out|md)$/.test(f)) continue;
    let d = readFileSync(f);
    if (f.includes('/hex/exabgp/')) {
      const hexes = d.toString('latin1').match(/[0-9A-Fa-f:]{40,}/g) ?? [];
      d = Buffer.concat(hexes.map((h) => Buffer.from(h.replace(/:/g, ''), 'hex')));
    }
    for (let i = d.indexOf(marker); i >= 0 && i + 19 <= d.length; i = d.indexOf(marker, i + 1)) {
      const len = d.readUInt16BE(i + 16);
      const type = d[i + 18] as number;
      if (type < 1 || type > 5 || type === 2 || len < 19 || i + len > d.length) continue;
      if (d.subarray(i + 1, i + 17).equals(marker) && d[i + 16] === 0xff) continue; // inside a longer run of 0xff
      const k = d.subarray(i, i + len).toString('hex');
      if (!seen.has(k)) seen.set(k, f.slice(SHARED.length + 1));
    }
  }
  const byType = [0, 0, 0, 0, 0, 0];
  let failures = 0;
  for (const [k, src] of seen) {
    const bytes = Buffer.from(k, 'hex');
    byType[bytes[18] as number] = (byType[bytes[18] as number] ?? 0) + 1;
    try {
      const msg = decodeMessage(bytes, ctx);
      if (encodeMessage(msg, ctx).toString('hex') !== k) {
        failures++;
        t.fail(`re-encode differs: ${src}`);
      }
    } catch (e) {
      failures++;
      t.fail(`${src}: ${String(e)}`);
    }
  }
  t.ok(byType[1]! >= 20, `${byType[1]} distinct OPENs`);
  t.ok(byType[3]! >= 10, `${byType[3]} distinct NOTIFICATIONs`);
  t.ok(byType[5]! >= 5, `${byType[5]} distinct ROUTE-REFRESHes`);
  t.ok(byType[4]! >= 1, `${byType[4]} KEEPALIVE`);
  t.equal(failures, 0, `${seen.size} real messages decode and re-encode exactly`);
});
