/**
 * Whether THIS node may announce anything, and whether it is leaving service, from its Node object
 * (docs/kubernetes.md "Node eligibility and departure", docs/decisions.md "Node eligibility", "Stop modes").
 *
 * Departure signals (the node is going away; traffic must move first): the Node gone (after it was seen) or its
 * deletion timestamp, the cluster autoscaler's scale-down taint `ToBeDeletedByClusterAutoscaler`, the taint
 * `node.kubernetes.io/out-of-service` (non-graceful node shutdown), condition Ready False or Unknown (also how the
 * kubelet's graceful node shutdown shows), and the label `node.kubernetes.io/exclude-from-external-load-balancers`
 * (presence, whatever its value; not with `ignoreExcludeLabel`, the configuration's `ignoreExcludeLB`). With `departureDrains` (some peer has gracefulShutdown enabled) they do not block
 * the VIPs: the daemon drains instead (RFC 8326: 65535:0, the wait, the withdrawal). Without it they withdraw at once.
 * NetworkUnavailable True always blocks at once (the node's network is broken). A cordon alone does neither.
 *
 * Sources: Kubernetes well-known labels, annotations and taints (`node.kubernetes.io/exclude-from-external-load-
 * balancers`, `node.kubernetes.io/out-of-service`), the cluster-autoscaler FAQ (`ToBeDeletedByClusterAutoscaler`),
 * core/v1 NodeCondition and NodeAddress (`status.addresses`, type InternalIP).
 */
import type { Node } from '../k8s/types.ts';
import { ipFamilyOf } from '../net/address.ts';
import type { IpFamily } from '../net/address.ts';
import type { Reason } from './reasons.ts';
import { ReasonCode } from './reasons.ts';

/** Label whose presence excludes a node (presence rule, docs/decisions.md). */
export const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Taint set by cluster-autoscaler before scale-down. */
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';
/** Taint of a node shut down without the kubelet's graceful shutdown (Kubernetes "non-graceful node shutdown"). */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';
/** Annotation that drains this node while present (docs/decisions.md "Drain"); its value says why. */
export const DRAIN_ANNOTATION = 'herald.io/drain';

/** Eligibility of this node. */
export interface NodeState {
  name: string;
  /** No blocking reason. */
  eligible: boolean;
  /** Blocking reasons: the VIPs are withdrawn at once (empty when eligible). */
  reasons: Reason[];
  /** Departure signals, whether they block (without departureDrains) or drain (with it); empty when staying. */
  departing: Reason[];
  labels: Record<string, string>;
  /** The first InternalIP of each IP family in `status.addresses`. */
  addresses: Partial<Record<IpFamily, string>>;
  /** The value of the `herald.io/drain` annotation while it is present. */
  drain?: string;
}

/** Options of {@link evaluateNode}. */
export interface EvaluateNodeOptions {
  /** Departure signals drain instead of blocking (some peer has gracefulShutdown enabled). */
  departureDrains?: boolean;
  /**
   * The last Node object seen for this node: with departureDrains, a Node gone since departs (NodeNotFound in
   * `departing`) and keeps these labels while it drains; otherwise it is simply not known (withdrawn at once).
   */
  lastSeen?: Node;
  /** `ignoreExcludeLB`: the label exclude-from-external-load-balancers neither excludes nor departs (MetalLB's --ignore-exclude-lb). */
  ignoreExcludeLabel?: boolean;
}

function internalIps(node: Node): Partial<Record<IpFamily, string>> {
  const out: Partial<Record<IpFamily, string>> = {};
  for (const a of node.status?.addresses ?? []) {
    if (a.type !== 'InternalIP' || typeof a.address !== 'string') continue;
    const family = ipFamilyOf(a.address);
    if (family !== undefined && out[family] === undefined) out[family] = a.address;
  }
  return out;
}

/** Eligibility of node `name` from its Node object (undefined = not found). */
export function evaluateNode(node: Node | undefined, name: string, opts: EvaluateNodeOptions = {}): NodeState {
  const departing: Reason[] = [];
  const blocking: Reason[] = [];
  // A Node gone after it was seen departs; only a drain keeps announcing meanwhile (with its last labels).
  const seen = node ?? (opts.departureDrains ? opts.lastSeen : undefined);
  if (!seen) {
    return { name, eligible: false, labels: {}, addresses: {}, departing, reasons: [{ code: ReasonCode.NodeNotFound, message: `Node ${name} is not known; announcing nothing` }] };
  }
  if (!node) departing.push({ code: ReasonCode.NodeNotFound, message: `Node ${name} is gone (deleted)` });
  const labels = seen.metadata?.labels ?? {};
  if (!opts.ignoreExcludeLabel && Object.hasOwn(labels, EXCLUDE_LABEL)) departing.push({ code: ReasonCode.NodeExcluded, message: `Node ${name} has label ${EXCLUDE_LABEL}` });
  const taints = seen.spec?.taints ?? [];
  if (taints.some((t) => t.key === TO_BE_DELETED_TAINT)) departing.push({ code: ReasonCode.NodeToBeDeleted, message: `Node ${name} has taint ${TO_BE_DELETED_TAINT}` });
  if (taints.some((t) => t.key === OUT_OF_SERVICE_TAINT)) departing.push({ code: ReasonCode.NodeOutOfService, message: `Node ${name} has taint ${OUT_OF_SERVICE_TAINT}` });
  if (seen.metadata?.deletionTimestamp != null) departing.push({ code: ReasonCode.NodeDeleting, message: `Node ${name} is being deleted` });
  for (const c of seen.status?.conditions ?? []) {
    if (c.type === 'Ready' && (c.status === 'False' || c.status === 'Unknown')) {
      departing.push({ code: ReasonCode.NodeNotReady, message: `Node ${name} condition Ready is ${c.status}` });
    }
    if (c.type === 'NetworkUnavailable' && c.status === 'True') {
      blocking.push({ code: ReasonCode.NodeNetworkUnavailable, message: `Node ${name} condition NetworkUnavailable is True` });
    }
  }
  const reasons = opts.departureDrains ? blocking : [...departing, ...blocking];
  const drain = seen.metadata?.annotations?.[DRAIN_ANNOTATION];
  return { name, eligible: reasons.length === 0, reasons, departing, labels, addresses: internalIps(seen), ...(drain !== undefined ? { drain } : {}) };
}
