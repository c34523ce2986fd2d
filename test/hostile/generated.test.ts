// Generated hostile input (issue 35 item 8), fast-check for every input path: the configuration (data and text),
// manifest files, Herald's CRD objects, a Service's herald.io/ annotations of any YAML type, the admin API's bodies,
// and BFD packets against a session that is Up. Each property: no throw, no 5xx, a refusal that names where, and
// nothing that moves a session. BGP messages have theirs in test/bgp/codec/messages.property.test.ts,
// update.property.test.ts and test/bgp/session/session-fuzz.test.ts; the replays of N1–N10 against `herald run`
// are the other files of this folder and the regression tests they name.
import t from 'tap';
import fc from 'fast-check';
import { validateConfig, parseConfigText } from '../../src/config/load.ts';
import { parseManifest } from '../../src/sources/manifest-parse.ts';
import { readObject } from '../../src/crd/objects.ts';
import { CONFIG_KINDS } from '../../src/k8s/herald-kinds.ts';
import { parseServiceAttributes } from '../../src/controller/service-attributes.ts';
import { parseHealthAnnotations, HealthAnnotation } from '../../src/health/annotations.ts';
import { buildAdminServer } from '../../src/admin/server.ts';
import { FakeView } from '../src/admin/fake-view.ts';
import { FakeClock } from '../../bgp/clock.ts';
import { BfdEngine } from '../../bgp/bfd/engine.ts';
import { decodeControlPacket, encodeControlPacket } from '../../bgp/bfd/packet.ts';
import type { BfdState } from '../../bgp/bfd/packet.ts';
import type { BfdTransport, UdpEndpoint } from '../../bgp/bfd/udp.ts';

const RUNS = { numRuns: 200 };

/** A valid configuration to mutate: generated input is most useful near the real shape. */
const VALID = {
  bgp: { localAs: 65000, routerId: '10.0.0.1' },
  peers: [{ name: 'tor', address: '192.0.2.1', peerAs: 65001, bfd: { enabled: true } }],
  pools: [{ name: 'p', addresses: ['192.0.2.64/26'] }],
  advertisements: [{ name: 'a', communities: ['65000:1'] }],
};

/** Replaces one path of `base` (a key chosen by index at each level) with `value`. */
function mutate(base: unknown, path: readonly number[], value: unknown): unknown {
  if (path.length === 0 || base === null || typeof base !== 'object') return value;
  const [head, ...rest] = path as [number, ...number[]];
  if (Array.isArray(base)) {
    if (base.length === 0) return value;
    const i = head % base.length;
    return base.map((x, j) => (j === i ? mutate(x, rest, value) : x));
  }
  const keys = Object.keys(base);
  if (keys.length === 0) return value;
  const k = keys[head % keys.length] as string;
  return { ...(base as Record<string, unknown>), [k]: mutate((base as Record<string, unknown>)[k], rest, value) };
}

const refusal = (errors: readonly { path: string; message: string }[]): boolean =>
  errors.length > 0 && errors.every((e) => typeof e.path === 'string' && typeof e.message === 'string' && e.message.length > 0);

t.test('configuration data: any value anywhere is accepted or refused with a path, never a throw', async (t) => {
  let refused = 0;
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 4 }), fc.anything(), (path, value) => {
      const r = validateConfig(mutate(VALID, path, value));
      if (!r.ok) {
        refused++;
        return refusal(r.errors);
      }
      return true;
    }),
    RUNS,
  );
  t.ok(refused > 0, `some generated configs were refused (${refused})`);
  t.equal(validateConfig(VALID).ok, true, 'the base is valid');
});

t.test('configuration text: any text parses or is refused with a path, never a throw', async (t) => {
  const yamlish = fc.stringMatching(/^[-a-zA-Z0-9 :\n[\]{}"'&*!%#|>,.@`~]{0,200}$/);
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 300 }), yamlish), (text) => {
      // an alias without its anchor threw ReferenceError out of the parse (found by this property)
      const r = parseConfigText(text);
      return r.ok || refusal(r.errors);
    }),
    RUNS,
  );
  t.match(parseConfigText('bgp: *x'), { ok: false, errors: [{ path: '(yaml)', message: /document not usable: Unresolved alias/ }] });
});

t.test('manifest files: any text gives objects or one error with its message, never a throw', async (t) => {
  const service = fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Service'), metadata: fc.record({ name: fc.string(), namespace: fc.string(), annotations: fc.dictionary(fc.string(), fc.anything()) }, { requiredKeys: [] }), spec: fc.anything(), status: fc.anything() }, { requiredKeys: ['kind'] });
  const texts = fc.oneof(fc.string({ maxLength: 300 }), service.map((o) => JSON.stringify(o) ?? ''), fc.array(service, { maxLength: 4 }).map((l) => l.map((o) => JSON.stringify(o)).join('\n---\n')));
  let errors = 0;
  fc.assert(
    fc.property(texts, (text) => {
      const r = parseManifest('/m/gen.yaml', text);
      if ('error' in r) {
        errors++;
        return typeof r.error.message === 'string' && r.error.message.length > 0;
      }
      return Array.isArray(r.objects);
    }),
    RUNS,
  );
  t.ok(errors > 0, `some generated files were refused (${errors})`);
});

t.test("Herald's CRD objects: any spec of every kind is read or refused with the object's field, never a throw", async (t) => {
  t.equal(CONFIG_KINDS.length, 4);
  for (const kind of CONFIG_KINDS) {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.dictionary(fc.constantFrom('peerAddress', 'peerASN', 'myASN', 'addresses', 'communities', 'bfdProfile', 'nodeSelectors', 'ipAddressPools', 'routerID', 'peers'), fc.anything())), (spec) => {
        const r = readObject(kind, { apiVersion: 'herald.io/v1alpha1', kind, metadata: { name: 'gen' }, spec });
        return r.ok || (r.issues.length > 0 && r.issues.every((i) => typeof i.path === 'string' && typeof i.message === 'string'));
      }),
      RUNS,
    );
  }
  // found by this property: a spec field named like an Object.prototype member threw TypeError out of readObject
  t.match(readObject('BGPPeer', { apiVersion: 'herald.io/v1alpha1', kind: 'BGPPeer', metadata: { name: 'gen' }, spec: { toString: 0 } }), { ok: false, issues: [{ path: 'spec.peerAddress' }, { path: 'spec.peerASN' }, { path: 'spec.toString', message: 'unknown field' }] });
});

t.test('annotations of any YAML type: never a throw, every value that is not text refused by name', async (t) => {
  const names = ['herald.io/communities', 'herald.io/large-communities', 'herald.io/med', 'herald.io/as-path-prepend', ...Object.values(HealthAnnotation)];
  const timing = { intervalSec: 5, timeoutSec: 1, rise: 2, fall: 3 };
  fc.assert(
    // fc.jsonValue: what YAML can make of a value (never undefined)
    fc.property(fc.dictionary(fc.constantFrom(...names), fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue())), (annotations) => {
      // a manifest's unquoted value reaches Herald as what YAML made of it (issue 35 N9)
      const a = annotations as unknown as Record<string, string>;
      const attrs = parseServiceAttributes(a);
      const health = parseHealthAnnotations(a, timing);
      const healthErrors = health.ok ? [] : health.errors;
      for (const [k, v] of Object.entries(annotations)) {
        if (typeof v === 'string') continue;
        if (![...attrs.errors, ...healthErrors].some((e) => e.annotation === k)) return false;
      }
      return true;
    }),
    RUNS,
  );
  t.pass();
});

t.test('admin API bodies: any body, type and token is answered 2xx/4xx, never 5xx; no token, no action', async (t) => {
  const view = new FakeView();
  const app = await buildAdminServer({ view, token: () => 'tok' });
  t.teardown(() => app.close());
  const bodies = fc.oneof(fc.string({ maxLength: 200 }), fc.anything().map((v) => JSON.stringify(v) ?? 'null'), fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')));
  const types = fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/yaml', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16');
  const urls = fc.constantFrom('/api/v1/peers/tor-a/reset', '/api/v1/peers/nope/reset', '/api/v1/drain', '/api/v1/undrain', '/api/v1/routes?prefix=fe80::1%25eth0/64', '/api/v1/routes?prefix=%ff');
  await fc.assert(
    fc.asyncProperty(urls, bodies, types, fc.constantFrom('Bearer tok', 'Bearer nope', undefined), async (url, body, type, authorization) => {
      const headers: Record<string, string> = {};
      if (type !== undefined) headers['content-type'] = type;
      if (authorization !== undefined) headers.authorization = authorization;
      const r = await app.inject({ method: url.includes('routes') ? 'GET' : 'POST', url, headers, payload: body });
      if (r.statusCode >= 500) return false;
      if (!url.includes('routes') && authorization !== 'Bearer tok') return r.statusCode === 401;
      return true;
    }),
    RUNS,
  );
  t.pass();
});

t.test('BFD packets: any datagram decodes or is discarded; from the router, none without its discriminator moves an Up session', async (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
    const r = decodeControlPacket(b);
    return r.ok || r.message.length > 0;
  }), RUNS);

  const clock = new FakeClock(1_000_000);
  let receive: ((packet: Buffer, from: UdpEndpoint) => void) | undefined;
  const transport: BfdTransport = {
    openReceiver: async (at, onMessage) => {
      receive = onMessage;
      return { local: at, setTtlRules: () => ({ kind: 'kernel' }), droppedByKernel: () => 0, close: async () => undefined };
    },
    openSender: async () => ({ local: { address: '192.0.2.2', port: 49152 }, send: () => undefined, close: async () => undefined }),
  };
  const engine = new BfdEngine({ clock, transport, onUpdate: () => undefined });
  t.teardown(() => engine.close());
  await engine.add('tor', { remoteAddress: '192.0.2.1', multihop: false, transmitIntervalMs: 100, receiveIntervalMs: 100, detectMultiplier: 3, passive: false });
  const L = engine.info('tor')?.localDiscriminator ?? 0;
  const R = 0x5eed;
  const packet = (state: BfdState, my: number, your: number) => encodeControlPacket({ diag: 0, state, poll: false, final: false, controlPlaneIndependent: false, demand: false, detectMult: 3, myDiscriminator: my, yourDiscriminator: your, desiredMinTxIntervalUs: 100_000, requiredMinRxIntervalUs: 100_000, requiredMinEchoRxIntervalUs: 0 });
  const router = { address: '192.0.2.1', port: 49200 };
  receive?.(packet('Down', R, 0), router);
  receive?.(packet('Up', R, L), router);
  t.equal(engine.info('tor')?.state, 'Up');
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 24, maxLength: 48 }), fc.constantFrom(0, L, L + 1), fc.integer({ min: 1, max: 0xffffffff }).filter((d) => d !== R), (raw, your, my) => {
      const b = Buffer.from(raw);
      b[0] = 0x20 | ((b[0] ?? 0) & 0x1f); // version 1, so most packets pass the codec and reach the demultiplexer
      b[3] = Math.max(24, Math.min(b.length, b[3] ?? 0));
      b.writeUInt32BE(my, 4);
      b.writeUInt32BE(your, 8);
      receive?.(b, router);
      return engine.info('tor')?.state === 'Up';
    }),
    RUNS,
  );
  t.ok((engine.info('tor')?.discards.remoteDiscriminator ?? 0) > 0, 'they reached the demultiplexer and were discarded there');
});
