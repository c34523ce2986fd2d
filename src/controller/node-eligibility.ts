/**
 * Whether THIS node may announce anything, from its Node object (docs/kubernetes.md "Which routes", docs/decisions.md
 * "Node eligibility"): a missing Node, the exclude label (presence, whatever its value), the cluster-autoscaler's
 * scale-down taint, a deletion timestamp, Ready False/Unknown or NetworkUnavailable True make it ineligible; a
 * cordon (`spec.unschedulable`) alone does not.
 *
 * Sources: Kubernetes well-known labels and taints (`node.kubernetes.io/exclude-from-external-load-balancers`),
 * cluster-autoscaler FAQ (`ToBeDeletedByClusterAutoscaler`), core/v1 NodeCondition.
 */
import type { Node } from '../k8s/types.ts';
import type { Reason } from './reasons.ts';
import { ReasonCode } from './reasons.ts';

/** Label whose presence excludes a node (presence rule, docs/decisions.md). */
export const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Taint set by cluster-autoscaler before scale-down. */
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';

/** Eligibility of this node. */
export interface NodeState {
  name: string;
  eligible: boolean;
  /** Blocking reasons (empty when eligible). */
  reasons: Reason[];
  labels: Record<string, string>;
}

/** Eligibility of node `name` from its Node object (undefined = not found). */
export function evaluateNode(node: Node | undefined, name: string): NodeState {
  if (!node) {
    return { name, eligible: false, labels: {}, reasons: [{ code: ReasonCode.NodeNotFound, message: `Node ${name} is not known; announcing nothing` }] };
  }
  const reasons: Reason[] = [];
  const labels = node.metadata?.labels ?? {};
  if (Object.hasOwn(labels, EXCLUDE_LABEL)) {
    reasons.push({ code: ReasonCode.NodeExcluded, message: `Node ${name} has label ${EXCLUDE_LABEL}` });
  }
  if ((node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT)) {
    reasons.push({ code: ReasonCode.NodeToBeDeleted, message: `Node ${name} has taint ${TO_BE_DELETED_TAINT}` });
  }
  if (node.metadata?.deletionTimestamp != null) {
    reasons.push({ code: ReasonCode.NodeDeleting, message: `Node ${name} is being deleted` });
  }
  for (const c of node.status?.conditions ?? []) {
    if (c.type === 'Ready' && (c.status === 'False' || c.status === 'Unknown')) {
      reasons.push({ code: ReasonCode.NodeNotReady, message: `Node ${name} condition Ready is ${c.status}` });
    }
    if (c.type === 'NetworkUnavailable' && c.status === 'True') {
      reasons.push({ code: ReasonCode.NodeNetworkUnavailable, message: `Node ${name} condition NetworkUnavailable is True` });
    }
  }
  return { name, eligible: reasons.length === 0, reasons, labels };
}
