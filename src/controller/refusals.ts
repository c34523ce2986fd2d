/**
 * What Herald refuses of a Service whatever the node (admission.ts: addresses and announced prefixes outside what the
 * operator allows): the decision of a node every advertisement's `nodeSelector` matches, eligible, with no endpoint
 * (reasons that depend on a node — endpoints, eligibility, health — are not refusals and are left to the nodes). So
 * one component that sees no node at all (`herald controller`) can post the Warning Events of refused input, the same
 * ones every node would reach. PURE.
 */
import type { EndpointSlice, Service } from '../k8s/types.ts';
import type { DesiredRoutesContext, ServiceDecision } from './desired-routes.ts';
import { decideService } from './desired-routes.ts';
import type { NodeState } from './node-eligibility.ts';
import { REFUSAL_CODES } from './reasons.ts';

const NO_SLICES: readonly EndpointSlice[] = [];

/** A node that is every node: eligible, no labels, no address (its advertisements are read without nodeSelector). */
const ANY_NODE: NodeState = { name: '', eligible: true, reasons: [], departing: [], labels: {}, addresses: {} };

/** `ctx` with no advertisement limited to some nodes, once per context object. */
const anyNode = new WeakMap<DesiredRoutesContext, DesiredRoutesContext>();
function forAnyNode(ctx: DesiredRoutesContext): DesiredRoutesContext {
  let c = anyNode.get(ctx);
  if (c === undefined) {
    c = { ...ctx, nodeName: '', ...(ctx.advertisements ? { advertisements: ctx.advertisements.map(({ nodeSelector: _n, nodeSelectors: _ns, ...a }) => a) } : {}) };
    anyNode.set(ctx, c);
  }
  return c;
}

/**
 * The Service's VIPs, each with only its refusal reasons (src/controller/reasons.ts `REFUSAL_CODES`) and never
 * announced: the shape src/daemon/service-events.ts `AnnouncementEvents` reads, which posts a Warning per new refusal.
 */
export function refusalsOf(svc: Service, ctx: DesiredRoutesContext): ServiceDecision {
  const d = decideService(svc, NO_SLICES, ANY_NODE, forAnyNode(ctx)).decision;
  return { ...d, reasons: [], vips: d.vips.map((v) => ({ address: v.address, kind: v.kind, announced: false, reasons: v.reasons.filter((r) => REFUSAL_CODES.has(r.code)) })) };
}
