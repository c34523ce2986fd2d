/**
 * Annotated hex vectors (test/fixtures/bgp/*.hex, excluding update-*): four tests per valid vector (decode equals the
 * object; encode equals the vector; decode(encode(x)) equals x; the framer yields exactly one message), and for every
 * `# error: c/s data` vector the exact NOTIFICATION {code, subcode, data} from both decodeMessage and the framer.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BgpError } from '../../../bgp/errors.ts';
import { decodeMessage, encodeMessage } from '../../../bgp/codec/message.ts';
import { DEFAULT_CONTEXT } from '../../../bgp/codec/types.ts';
import type { BgpMessage } from '../../../bgp/codec/types.ts';
import { MessageFramer } from '../../../bgp/wire/framer.ts';
import { readHexFixture } from '../../helpers/hex.ts';
import * as w from '../../helpers/wire.ts';

const DIR = join(import.meta.dirname, '../../fixtures/bgp');
const ctx = DEFAULT_CONTEXT;
const hex = (s: string): Buffer => Buffer.from(s, 'hex');

/** Expected objects of the valid vectors, keyed by fixture name. */
const EXPECTED: Record<string, BgpMessage> = {
  keepalive: { type: 'KEEPALIVE' },
  'open-minimal': { type: 'OPEN', version: 4, myAutonomousSystem: 65000, holdTime: 180, bgpIdentifier: '192.0.2.1', capabilities: [] },
  'open-hold-time-zero': { type: 'OPEN', version: 4, myAutonomousSystem: 1, holdTime: 0, bgpIdentifier: '10.0.0.1', capabilities: [] },
  'open-capabilities-single': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 23456,
    holdTime: 90,
    bgpIdentifier: '10.0.0.1',
    capabilities: [
      { type: 'Multiprotocol', afi: 1, safi: 1 },
      { type: 'Multiprotocol', afi: 2, safi: 1 },
      { type: 'RouteRefresh' },
      { type: 'FourOctetAs', asNumber: 65536 },
    ],
  },
  'open-capabilities-per-parameter': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65001,
    holdTime: 240,
    bgpIdentifier: '198.51.100.1',
    capabilities: [{ type: 'Multiprotocol', afi: 1, safi: 1 }, { type: 'RouteRefresh' }, { type: 'RouteRefreshCisco' }],
    parameterLayout: 'perCapability',
  },
  'open-graceful-restart': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 180,
    bgpIdentifier: '10.0.0.2',
    capabilities: [
      {
        type: 'GracefulRestart',
        restarting: true,
        notification: true,
        restartTimeSec: 120,
        families: [
          { afi: 1, safi: 1, forwardingPreserved: true },
          { afi: 2, safi: 1, forwardingPreserved: false },
        ],
      },
    ],
  },
  'open-add-path': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 60,
    bgpIdentifier: '10.0.0.3',
    capabilities: [
      {
        type: 'AddPath',
        families: [
          { afi: 1, safi: 1, sendReceive: 3 },
          { afi: 2, safi: 1, sendReceive: 1 },
        ],
      },
      { type: 'EnhancedRouteRefresh' },
      { type: 'ExtendedMessage' },
      { type: 'RouteRefresh' },
    ],
  },
  'open-fqdn': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 180,
    bgpIdentifier: '10.0.0.4',
    capabilities: [{ type: 'Fqdn', hostname: 'node-1', domainName: 'example.com' }],
  },
  'open-unknown-capability': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 180,
    bgpIdentifier: '10.0.0.5',
    capabilities: [
      { type: 'Unknown', code: 71, value: hex('00010180000e10') },
      { type: 'Unknown', code: 200, value: hex('aabbcc') },
    ],
  },
  'open-capability-groups': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 180,
    bgpIdentifier: '10.0.0.6',
    capabilities: [{ type: 'Multiprotocol', afi: 1, safi: 1 }, { type: 'RouteRefresh' }, { type: 'FourOctetAs', asNumber: 65000 }],
    capabilityGroups: [2, 1, 0],
  },
  'open-extended-optional-parameters': {
    type: 'OPEN',
    version: 4,
    myAutonomousSystem: 65000,
    holdTime: 180,
    bgpIdentifier: '10.0.0.7',
    capabilities: [
      { type: 'Multiprotocol', afi: 1, safi: 1 },
      { type: 'FourOctetAs', asNumber: 65000 },
    ],
    parameterLayout: 'perCapability',
    extendedOptionalParameters: true,
  },
  'notification-hold-timer-expired': { type: 'NOTIFICATION', errorCode: 4, errorSubcode: 0, data: Buffer.alloc(0) },
  'notification-bad-peer-as': { type: 'NOTIFICATION', errorCode: 2, errorSubcode: 2, data: hex('fde9') },
  'notification-shutdown-communication': {
    type: 'NOTIFICATION',
    errorCode: 6,
    errorSubcode: 2,
    data: Buffer.concat([Buffer.from([15]), Buffer.from('maintenance ✓', 'utf8')]),
    shutdownCommunication: 'maintenance ✓',
  },
  'notification-reset-trailing-data': {
    type: 'NOTIFICATION',
    errorCode: 6,
    errorSubcode: 4,
    data: hex('026f6bffff'),
    shutdownCommunication: 'ok',
  },
  'notification-reset-bad-length': { type: 'NOTIFICATION', errorCode: 6, errorSubcode: 4, data: hex('056f6b') },
  'notification-shutdown-bad-utf8': { type: 'NOTIFICATION', errorCode: 6, errorSubcode: 2, data: hex('02c328') },
  'route-refresh': { type: 'ROUTE-REFRESH', afi: 1, subtype: 0, safi: 1 },
  'route-refresh-borr': { type: 'ROUTE-REFRESH', afi: 2, subtype: 1, safi: 1 },
  'route-refresh-eorr': { type: 'ROUTE-REFRESH', afi: 1, subtype: 2, safi: 1 },
  'route-refresh-orf': { type: 'ROUTE-REFRESH', afi: 1, subtype: 0, safi: 1, extra: hex('01400000') },
};

/** Independent builds (test/helpers/wire.ts) of some vectors: the annotated fixture must equal them. */
const BUILT: Record<string, Buffer> = {
  keepalive: w.keepalive(),
  'open-minimal': w.open({ as: 65000, holdTime: 180, id: '192.0.2.1' }),
  'open-capabilities-single': w.open({
    as: 23456,
    holdTime: 90,
    id: '10.0.0.1',
    params: [
      w.param(
        2,
        w.capability(1, w.u16(1), [0, 1]),
        w.capability(1, w.u16(2), [0, 1]),
        w.capability(2),
        w.capability(65, w.u32(65536)),
      ),
    ],
  }),
  'open-capabilities-per-parameter': w.open({
    as: 65001,
    holdTime: 240,
    id: '198.51.100.1',
    params: [w.param(2, w.capability(1, w.u16(1), [0, 1])), w.param(2, w.capability(2)), w.param(2, w.capability(128))],
  }),
  'open-extended-optional-parameters': w.openExtended({
    as: 65000,
    holdTime: 180,
    id: '10.0.0.7',
    params: [w.extParam(2, w.capability(1, w.u16(1), [0, 1])), w.extParam(2, w.capability(65, w.u32(65000)))],
  }),
  'notification-shutdown-communication': w.notification(6, 2, [15], Buffer.from('maintenance ✓')),
  'route-refresh-borr': w.routeRefresh(2, 1, 1),
};

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.hex') && !f.startsWith('update-') && !f.startsWith('real-'))
  .sort();
const fixtures = files.map((f) => readHexFixture(join(DIR, f)));
const valid = fixtures.filter((f) => f.directives.error === undefined);
const errors = fixtures.filter((f) => f.directives.error !== undefined);

t.test('fixture inventory', async (t) => {
  t.ok(valid.length >= 20, `found ${valid.length} valid vectors`);
  t.ok(errors.length >= 19, `found ${errors.length} error vectors`);
  t.same(valid.map((f) => f.name).sort(), Object.keys(EXPECTED).sort(), 'every valid vector has an expected object and vice versa');
});

for (const fx of valid) {
  const expected = EXPECTED[fx.name] as BgpMessage;
  t.test(`vector ${fx.name}`, async (t) => {
    t.same(decodeMessage(fx.bytes, ctx), expected, 'decode equals the object');
    t.equal(encodeMessage(expected, ctx).toString('hex'), fx.bytes.toString('hex'), 'encode equals the vector');
    t.same(decodeMessage(encodeMessage(expected, ctx), ctx), expected, 'decode(encode(x)) equals x');
    const framer = new MessageFramer();
    const out = framer.push(fx.bytes);
    t.equal(out.length, 1, 'framer yields exactly one message');
    t.equal(out[0]?.toString('hex'), fx.bytes.toString('hex'), 'framer message equals the vector');
    t.equal(framer.bufferedLength, 0, 'nothing left in the framer');
    const built = BUILT[fx.name];
    if (built) t.equal(fx.bytes.toString('hex'), built.toString('hex'), 'fixture equals the independent wire build');
  });
}

function parseErrorDirective(d: string, bytes: Buffer): { code: number; subcode: number; data: string } {
  const m = /^(\d+)\/(\d+)(?:\s+(\S+))?$/.exec(d);
  if (!m) throw new Error(`bad error directive ${d}`);
  const data = m[3] === '*' ? bytes.toString('hex') : (m[3] ?? '');
  return { code: Number(m[1]), subcode: Number(m[2]), data };
}

function caught(fn: () => unknown): { code: number; subcode: number; data: string } | string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    if (!(e instanceof BgpError)) return `not a BgpError: ${String(e)}`;
    return { code: e.code, subcode: e.subcode, data: e.data.toString('hex') };
  }
}

for (const fx of errors) {
  const want = parseErrorDirective(fx.directives.error as string, fx.bytes);
  t.test(`error vector ${fx.name} → ${want.code}/${want.subcode}`, async (t) => {
    t.same(caught(() => decodeMessage(fx.bytes, ctx)), want, 'decodeMessage throws the exact NOTIFICATION');
    // The framer checks the header as soon as 19 octets arrive; body errors surface from decodeMessage on its output.
    const viaFramer = caught(() => {
      for (const m of new MessageFramer().push(fx.bytes)) decodeMessage(m, ctx);
    });
    // When Length and byte count disagree (e.g. 18, 4097) the framer must fail on the header alone.
    t.same(viaFramer, want, 'framer (+ decodeMessage on its output) throws the same');
  });
}
