// An unknown field names the known field it most likely stands for (trial 2026-12-02: `holdTme: unknown field`).
import t from 'tap';
import { z } from 'zod';
import { closestName, fieldNamesAt, unknownFieldMessage } from '../../../src/config/field-names.ts';
import { validateConfig } from '../../../src/config/load.ts';
import { configSchema } from '../../../src/config/schema.ts';

t.test('fieldNamesAt follows lists, wrappers and unions to the mapping at the path', async (t) => {
  const schema = z.strictObject({
    peers: z.array(z.strictObject({ name: z.string(), holdTime: z.number().optional() })).default([]),
    either: z.union([z.strictObject({ alpha: z.number() }), z.strictObject({ beta: z.number() })]).optional(),
    labels: z.record(z.string(), z.strictObject({ value: z.string() })).optional(),
  });
  t.same(fieldNamesAt(schema, []), ['peers', 'either', 'labels']);
  t.same(fieldNamesAt(schema, ['peers', 3]), ['name', 'holdTime']);
  t.same(fieldNamesAt(schema, ['either']), ['alpha', 'beta']);
  t.same(fieldNamesAt(schema, ['labels', 'any']), ['value']);
  t.same(fieldNamesAt(schema, ['peers']), [], 'a list is no mapping');
  t.same(fieldNamesAt(schema, ['nope', 'deeper']), [], 'a path the schema does not have');
  t.same(fieldNamesAt(configSchema, ['peers', 0]).includes('holdTime'), true, 'the real schema: a peer');
});

t.test('closestName: other letter case, then one or two edits; nothing far', async (t) => {
  const known = ['localAs', 'routerId', 'holdTime', 'communities', 'port'];
  t.equal(closestName('localAS', known), 'localAs');
  t.equal(closestName('holdTme', known), 'holdTime', 'a deletion');
  t.equal(closestName('hlodTime', known), 'holdTime', 'two letters swapped');
  t.equal(closestName('comunities', known), 'communities');
  t.equal(closestName('prot', known), 'port', 'a swap in a short name');
  t.equal(closestName('pt', known), undefined, 'two edits are too many for a short name');
  t.equal(closestName('asn', known), undefined);
  t.equal(closestName('zzz', known), undefined);
  t.equal(closestName('x', []), undefined);
});

t.test('config errors carry the suggestion, at every depth', async (t) => {
  const r = validateConfig({
    bgp: { localAs: 65000, routerId: '10.0.0.1', routerID: '10.0.0.2' },
    peers: [{ name: 'a', address: '10.0.0.2', peerAs: 65001, holdTme: 90 }],
    routes: [{ prefix: '10.0.0.0/24', comunities: ['1:1'], zzz: 1 }],
  });
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(
    r.errors.map((e) => `${e.path}: ${e.message}`),
    [
      'bgp.routerID: unknown field (did you mean routerId?)',
      'peers[0].holdTme: unknown field (did you mean holdTime?)',
      'routes[0].comunities: unknown field (did you mean communities?)',
      'routes[0].zzz: unknown field',
    ],
  );
  t.equal(unknownFieldMessage(configSchema, [], 'peer'), 'unknown field (did you mean peers?)');
});
