// ForbiddenCalls: a 403 is recorded (once warned) until the same call succeeds; other errors pass through
// unrecorded; apiErrorText reads the apiserver's Status message out of client-node's ApiException body.
import t from 'tap';
import { ApiException } from '@kubernetes/client-node';
import { ForbiddenCalls, apiErrorCode, apiErrorText } from '../../../src/k8s/forbidden.ts';

const status403 = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason: 'Forbidden',
  code: 403,
  message: 'events is forbidden: User "system:serviceaccount:herald-system:herald" cannot create resource "events" in API group "" in the namespace "default"',
});

t.test('apiErrorText and apiErrorCode', async (t) => {
  const e = new ApiException(403, 'Unknown API Status Code!', status403, {});
  t.equal(apiErrorCode(e), 403);
  t.equal(apiErrorText(e), 'HTTP 403: events is forbidden: User "system:serviceaccount:herald-system:herald" cannot create resource "events" in API group "" in the namespace "default"');
  const w = Object.assign(new Error('Forbidden'), { statusCode: 403 });
  t.equal(apiErrorCode(w), 403, 'a watch error carries statusCode');
  t.equal(apiErrorText(w), 'HTTP 403: Forbidden');
  t.equal(apiErrorText(new Error('connect ECONNREFUSED 127.0.0.1:6443\nmore')), 'connect ECONNREFUSED 127.0.0.1:6443');
  t.equal(apiErrorCode(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })), undefined, 'a string code is not an HTTP status');
});

t.test('a 403 is kept until the call succeeds; warned once', async (t) => {
  const warned: string[] = [];
  const allowed: string[] = [];
  let now = 1000;
  const calls = new ForbiddenCalls({ onForbidden: (c) => warned.push(`${c.call}@${c.sinceMs}`), onAllowed: (c) => allowed.push(c), nowMs: () => now });
  const forbidden = () => Promise.reject(new ApiException(403, 'x', status403, {}));
  await t.rejects(calls.track('create events', forbidden), { code: 403 }, 'the error passes through');
  now = 2000;
  await t.rejects(calls.track('create events', forbidden));
  t.same(warned, ['create events@1000'], 'warned once, since the first refusal');
  t.match(calls.list(), [/^create events: HTTP 403: events is forbidden: User "system:serviceaccount:herald-system:herald" cannot create/]);
  await t.rejects(calls.track('update leases', () => Promise.reject(new ApiException(409, 'Conflict', '{}', {}))), { code: 409 });
  t.equal(calls.list().length, 1, 'a 409 is no RBAC problem');
  t.equal(await calls.track('create events', async () => 7), 7, 'the result passes through');
  t.same(calls.list(), [], 'a success clears the entry');
  t.same(allowed, ['create events']);
});
