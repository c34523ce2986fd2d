/**
 * Herald's own API group, `herald.io/v1alpha1`: the names of its kinds and resources. The schemas are generated from
 * the configuration's zod schema (src/crd/kinds.ts, deploy/kubernetes/crds/); this module holds only what the
 * informers and the object store need: group, version, plural resource names and the object shape.
 *
 * Every kind is namespaced and read in Herald's own namespace only (docs/decisions.md "Configuration sources").
 */
import type { KubeObject } from './types.ts';

export const HERALD_GROUP = 'herald.io';
export const HERALD_VERSION = 'v1alpha1';
export const HERALD_API_VERSION = `${HERALD_GROUP}/${HERALD_VERSION}`;

/** The kinds that configure Herald (their objects add to the configuration file's lists). */
export const CONFIG_KINDS = ['BGPPeer', 'BGPAdvertisement', 'IPAddressPool', 'BGPNodeConfigOverride'] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number];

/** Every kind of the group: the configuration kinds and each node's status object. */
export type HeraldKind = ConfigKind | 'BGPNodeStatus';

/** Plural (resource) names, as in URLs and RBAC rules. */
export const HERALD_PLURALS: Readonly<Record<HeraldKind, string>> = {
  BGPPeer: 'bgppeers',
  BGPAdvertisement: 'bgpadvertisements',
  IPAddressPool: 'ipaddresspools',
  BGPNodeConfigOverride: 'bgpnodeconfigoverrides',
  BGPNodeStatus: 'bgpnodestatuses',
};

/** metav1.Condition (apimachinery pkg/apis/meta/v1 types.go). `lastTransitionTime` is RFC 3339. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** An object of the group as read from the apiserver: `spec` is checked by Herald (src/crd/objects.ts). */
export interface HeraldObject extends KubeObject {
  spec?: unknown;
  status?: { conditions?: Condition[]; [field: string]: unknown };
}

/** The collection path of `kind` in `namespace`, e.g. /apis/herald.io/v1alpha1/namespaces/herald-system/bgppeers. */
export function heraldCollectionPath(kind: HeraldKind, namespace: string): string {
  return `/apis/${HERALD_API_VERSION}/namespaces/${namespace}/${HERALD_PLURALS[kind]}`;
}
