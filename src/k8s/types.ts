/**
 * Structural shapes of the Kubernetes objects Herald reads: exactly the fields it keeps (src/k8s/trim.ts), so code
 * that reads a field the store does not hold does not compile.
 *
 * These are the raw JSON shapes, as Herald's own client (src/k8s/client.ts) parses list pages and watch events and as
 * manifest files are read: plain data, no model classes, so nothing here relies on `instanceof` or on `Date`
 * methods. Timestamps (RFC 3339 text) are typed `unknown` and only tested for presence.
 *
 * Source: kubernetes/api core/v1/types.go, discovery/v1/types.go, networking/v1 ServiceCIDR.
 */
import type { ConfigKind } from './herald-kinds.ts';

/** `metadata` subset. `resourceVersion` is an opaque string (compare for equality only). */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  /** Incremented by the apiserver on every change of `spec` (custom resources with a status subresource). */
  generation?: number;
  /** The object's unique id (an opaque string). Nodes only: the owner of this node's BGPNodeStatus. */
  uid?: string;
  /** When the object was created (RFC 3339 text; IPAM's creation order). Services only. */
  creationTimestamp?: unknown;
  labels?: Record<string, string>;
  /** Only Herald's own (`herald.io/`) are kept. */
  annotations?: Record<string, string>;
  /** Set when deletion has been requested (RFC 3339 text). */
  deletionTimestamp?: unknown;
}

/** Any Kubernetes object with metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** core/v1 Service (fields used by Herald). */
export interface Service extends KubeObject {
  spec?: {
    type?: string; // ClusterIP (default) | NodePort | LoadBalancer | ExternalName
    clusterIP?: string; // "None" = headless
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    externalIPs?: string[];
    externalTrafficPolicy?: string; // Cluster (default) | Local
    internalTrafficPolicy?: string; // Cluster (default) | Local
    loadBalancerClass?: string;
    loadBalancerIP?: string;
    healthCheckNodePort?: number;
    ports?: Array<{ port?: number; protocol?: string }>;
    selector?: Record<string, string>;
  };
  status?: {
    loadBalancer?: {
      ingress?: Array<{ ip?: string; ipMode?: string }>;
    };
  };
}

/** discovery.k8s.io/v1 EndpointSlice endpoint. Conditions: ready nil=true, serving nil=true, terminating nil=false. */
export interface Endpoint {
  addresses?: string[];
  conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
  nodeName?: string;
}

/** discovery.k8s.io/v1 EndpointSlice. Joined to its Service by the label `kubernetes.io/service-name`. */
export interface EndpointSlice extends KubeObject {
  addressType?: string; // IPv4 | IPv6 | FQDN
  endpoints?: Endpoint[] | null;
}

/** core/v1 Node (fields used by Herald). */
export interface Node extends KubeObject {
  spec?: {
    taints?: Array<{ key?: string }>;
  };
  status?: {
    conditions?: Array<{ type?: string; status?: string }>;
    /** The node's addresses (`type` InternalIP, ExternalIP, Hostname, ...). */
    addresses?: Array<{ type?: string; address?: string }>;
  };
}

/** networking.k8s.io/v1 ServiceCIDR (GA in 1.33): `spec.cidrs` holds at most one CIDR per family. */
export interface ServiceCIDR extends KubeObject {
  spec?: { cidrs?: string[] };
}

/** The object kinds a Source delivers: the four Kubernetes kinds and Herald's configuration kinds (herald-kinds.ts). */
export type ResourceKind = 'Service' | 'EndpointSlice' | 'Node' | 'ServiceCIDR' | ConfigKind;

/** Label on an EndpointSlice naming its Service (same namespace). Source: discovery/v1 well_known_labels.go. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
