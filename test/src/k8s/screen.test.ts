// screenObject (src/k8s/screen.ts): the shapes Herald reads (src/k8s/shapes.ts, the table trim.ts keeps by too), each problem named by its field path; what the API
// server really writes (null lists and conditions, unknown fields) passes.
import t from 'tap';
import { screenObject } from '../../../src/k8s/screen.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';

t.test('well-formed objects pass, with the nulls and extra fields real objects carry', async (t) => {
  t.equal(screenObject('Service', service('web', { etp: 'Local', lbIPs: ['198.51.100.1'] })), undefined);
  t.equal(screenObject('EndpointSlice', slice('web-1', 'web', [['10.0.0.1', 'node-a', { ready: true }]])), undefined);
  t.equal(screenObject('Node', node('node-a')), undefined);
  t.equal(screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd', managedFields: [{}] }, addressType: 'IPv4', endpoints: null, ports: null }), undefined, 'null lists');
  t.equal(screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: null, serving: null, terminating: null }, nodeName: 'n', targetRef: { kind: 'Pod' } }] }), undefined, 'null conditions');
  t.equal(screenObject('ServiceCIDR', { metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/12'] } }), undefined);
});

t.test('what Herald cannot read is named by its field path and what was found', async (t) => {
  t.equal(screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd' }, addressType: 'IPv4', endpoints: [null] }), 'endpoints[0]: expected object, got null');
  t.equal(screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd' }, endpoints: [{ addresses: '10.0.0.1' }] }), 'endpoints[0].addresses: expected array, got a string "10.0.0.1"');
  t.equal(screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd' }, endpoints: [{ conditions: { ready: 'yes' } }] }), 'endpoints[0].conditions.ready: expected boolean, got a string "yes"');
  t.equal(screenObject('Service', { metadata: { name: 'web', namespace: 'd' }, spec: { ports: 'http', externalIPs: [1] } }), 'spec.externalIPs[0]: expected string, got number 1; spec.ports: expected array, got a string "http"');
  t.equal(screenObject('Service', { metadata: { name: 'web' }, spec: {} }), 'metadata.namespace: expected string, got nothing');
  // Issue 35 N9: an annotation value of another type is a bad annotation (refused where it is read, its last good
  // value kept), never a quarantine of the Service (test/src/controller/service-attributes.test.ts).
  t.equal(screenObject('Service', { metadata: { name: 'web', namespace: 'd', annotations: { 'herald.io/med': 1, 'herald.io/communities': ['a'] } } }), undefined, 'an annotation of another type does not quarantine');
  t.equal(screenObject('Service', { metadata: { name: 'web', namespace: 'd', annotations: { 'example.com/a': 1 } } }), undefined, 'an annotation Herald does not read may hold anything');
  t.equal(screenObject('Node', { metadata: { name: '' } }), 'metadata.name: is empty');
  t.equal(screenObject('Node', { metadata: { name: 'n' }, status: { conditions: [{ type: 'Ready', status: true }] } }), 'status.conditions[0].status: expected string, got boolean true');
  t.equal(screenObject('Service', null), '(object): expected object, got null');
  const many = screenObject('EndpointSlice', { metadata: { name: 's', namespace: 'd' }, endpoints: [null, null, null, null, null] });
  t.equal(many, 'endpoints[0]: expected object, got null; endpoints[1]: expected object, got null; endpoints[2]: expected object, got null (and 2 more)');
});
