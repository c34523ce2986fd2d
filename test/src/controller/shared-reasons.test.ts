// Shared reasons (src/controller/reasons.ts sharedReason): Services in the same situation hold one Reason object,
// not one each; a reason naming a VIP's own prefix stays per VIP; the table is bounded.
import t from 'tap';
import { decideService } from '../../../src/controller/desired-routes.ts';
import type { DesiredRoutesContext } from '../../../src/controller/desired-routes.ts';
import { evaluateNode } from '../../../src/controller/node-eligibility.ts';
import { MAX_SHARED_REASONS, ReasonCode, sharedReason } from '../../../src/controller/reasons.ts';
import { trimObject } from '../../../src/k8s/trim.ts';
import type { EndpointSlice, Node, Service } from '../../../src/k8s/types.ts';
import { DOCUMENTATION_PREFIXES, node, service, slice } from '../../helpers/k8s-objects.ts';

const ME = 'n1';
const ctx: DesiredRoutesContext = { nodeName: ME, allowedPrefixes: DOCUMENTATION_PREFIXES };
const state = evaluateNode(trimObject('Node', node(ME)) as Node, ME);

function decide(i: number, local: boolean) {
  const svc = trimObject('Service', service(`svc-${i}`, { etp: 'Local', clusterIPs: [`10.96.0.${i}`], lbIPs: [`192.0.2.${i}`] })) as Service;
  const sl = trimObject('EndpointSlice', slice(`svc-${i}-a`, `svc-${i}`, [[`10.1.0.${i}`, local ? ME : 'n2']])) as EndpointSlice;
  return decideService(svc, [sl], state, ctx);
}

t.test('two Services with the same endpoint situation share their endpoint reasons, object for object', async (tt) => {
  for (const local of [false, true]) {
    const [a, b] = [decide(1, local), decide(2, local)];
    const lb = (d: ReturnType<typeof decide>) => d.decision.vips.find((v) => v.kind === 'loadBalancer');
    const [ra, rb] = [lb(a)?.reasons ?? [], lb(b)?.reasons ?? []];
    const code = local ? ReasonCode.LocalReadyEndpoint : ReasonCode.NoLocalReadyEndpoint;
    const ea = ra.find((r) => r.code === code);
    tt.ok(ea, `${code} found`);
    tt.equal(ea, rb.find((r) => r.code === code), `${code}: the same object in both Services`);
    tt.ok(Object.isFrozen(ea), 'frozen: no holder can change it for the others');
    if (local) {
      const [adA, adB] = [ra.find((r) => r.code === ReasonCode.Advertised), rb.find((r) => r.code === ReasonCode.Advertised)];
      tt.ok(adA && adB && adA !== adB && adA.message !== adB.message, 'Advertised names each VIP: its own');
    }
  }
});

t.test('the table is bounded and keeps working when it starts again', async (tt) => {
  const first = sharedReason(ReasonCode.NoAdvertisement, 'bounded probe');
  tt.equal(sharedReason(ReasonCode.NoAdvertisement, 'bounded probe'), first);
  for (let i = 0; i <= MAX_SHARED_REASONS; i++) sharedReason(ReasonCode.NoAdvertisement, `probe ${i}`);
  const again = sharedReason(ReasonCode.NoAdvertisement, 'bounded probe');
  tt.strictSame(again, { code: ReasonCode.NoAdvertisement, message: 'bounded probe' });
  tt.not(again, first, 'a new object after the table started again');
});
