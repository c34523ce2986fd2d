/**
 * The one rule for "a usable endpoint", and for "a local ready endpoint" (a usable one on this node). It decides
 * whether a VIP may be announced (desired-routes.ts), which addresses an annotation health check probes
 * (src/daemon/check-specs.ts) and the counts shown in the reason chain of `/api/v1/services`.
 *
 * An endpoint is usable when it has an address, `ready` is true or unset (unset means true) and `terminating` is
 * false or unset; with `countServingTerminating`, a terminating endpoint that is serving (true or unset) is usable
 * too (docs/decisions.md "Terminating endpoints"). Only slices of the VIP's IP family count (`addressType`; kube-proxy
 * runs one proxier per family); FQDN slices never do. An endpoint is its first address (kube-proxy uses only that
 * one); the same address in two slices (an endpoint moving between slices) counts once, the usable copy first, then
 * the local one. Source: discovery.k8s.io/v1 EndpointConditions.
 */
import type { EndpointSlice } from '../k8s/types.ts';
import { SharedTable } from '../k8s/terms.ts';
import type { IpFamily } from '../net/address.ts';

const NO_ADDRESSES: readonly string[] = Object.freeze([]);

/** The endpoints of one Service in one IP family, as seen from one node. */
export interface EndpointCounts {
  /** Usable endpoints on this node. */
  local: number;
  /** Usable endpoints anywhere (this node included). */
  total: number;
  /** Terminating endpoints (any node) not counted as usable. */
  terminating: number;
  /** Not-ready, not terminating endpoints (any node). */
  notReady: number;
  /** Addresses of the usable endpoints on this node, in slice order (what annotation checks probe). */
  localAddresses: readonly string[];
}

/**
 * Count the endpoints of `family` in `slices` (all slices of one Service) as seen from node `nodeName`.
 * Never throws for missing fields (an absent condition takes its Kubernetes default).
 */
export function countEndpoints(slices: readonly EndpointSlice[], family: IpFamily, nodeName: string, countServingTerminating: boolean): EndpointCounts {
  const best = new Map<string, { usable: boolean; local: boolean; terminating: boolean }>();
  for (const slice of slices) {
    if (slice.addressType !== family) continue;
    for (const ep of slice.endpoints ?? []) {
      const addr = ep.addresses?.[0];
      if (!addr) continue;
      const c = ep.conditions ?? {};
      const ready = c.ready ?? true;
      const serving = c.serving ?? true;
      const terminating = c.terminating ?? false;
      const usable = (ready && !terminating) || (countServingTerminating && serving && terminating);
      const local = ep.nodeName === nodeName;
      const prev = best.get(addr);
      if (!prev || (usable && !prev.usable) || (usable === prev.usable && local && !prev.local)) {
        best.set(addr, { usable, local, terminating });
      }
    }
  }
  let local: string[] | undefined;
  const out: EndpointCounts = { local: 0, total: 0, terminating: 0, notReady: 0, localAddresses: NO_ADDRESSES };
  for (const [addr, e] of best) {
    if (e.usable) {
      out.total++;
      if (e.local) {
        out.local++;
        (local ??= []).push(addr);
      }
    } else if (e.terminating) out.terminating++;
    else out.notReady++;
  }
  if (local) out.localAddresses = local.slice(); // its exact length: a list grown by push keeps room for 17
  return out.local === 0 ? sharedCounts(out) : out;
}

/** Most distinct shared counts held (then the table starts again). */
const MAX_SHARED_COUNTS = 1024;
const shared = new SharedTable<EndpointCounts>(MAX_SHARED_COUNTS);

/**
 * The one frozen copy of counts without a local endpoint (`local` 0, no addresses) for every Service that has them:
 * most Services of a cluster have none on a given node, and the controller keeps the counts of every Service
 * (docs/benchmarks.md "Where the memory goes").
 */
function sharedCounts(counts: EndpointCounts): EndpointCounts {
  const key = `${counts.total}/${counts.terminating}/${counts.notReady}`;
  return shared.get(key) ?? shared.hold(key, Object.freeze(counts));
}

/**
 * Names of the nodes that hold a usable endpoint of `family` in `slices` (the rule above). Unlike the counts of
 * {@link countEndpoints}, which prefer this node's copy of an address seen in two slices, the set depends on the
 * slices alone, so every node computes the same one from the same snapshot (the rendezvous choice of
 * steering.ts needs that). A node's own `local > 0` holds exactly when it is in the set.
 */
export function nodesWithUsableEndpoints(slices: readonly EndpointSlice[], family: IpFamily, countServingTerminating: boolean): Set<string> {
  const out = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== family) continue;
    for (const ep of slice.endpoints ?? []) {
      if (!ep.addresses?.[0] || ep.nodeName === undefined) continue;
      const c = ep.conditions ?? {};
      const terminating = c.terminating ?? false;
      if (((c.ready ?? true) && !terminating) || (countServingTerminating && (c.serving ?? true) && terminating)) out.add(ep.nodeName);
    }
  }
  return out;
}
