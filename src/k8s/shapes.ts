/**
 * The fields Herald reads of each Kubernetes kind, with their JSON types: the one definition both the trimmer
 * (src/k8s/trim.ts: the cache keeps these fields, nothing else) and the screening (src/k8s/screen.ts: an object whose
 * kept fields do not have these types is quarantined) are built from. src/k8s/types.ts describes the same fields as
 * TypeScript types; test/src/k8s/trim.test.ts fails when code reads a field this table leaves out.
 *
 * Written from what the code reads: the controller (Service VIPs, traffic policies, class, labels for advertisement
 * selectors; EndpointSlice endpoints; Node eligibility and labels for node selectors), the health checks
 * (`herald.io/health-check-*` annotations, `healthCheckNodePort`), per-Service attributes (`herald.io/` annotations),
 * IPAM (families, ports, selector, requested IPs, creation order, resourceVersion for conditional writes; MetalLB's
 * three Service annotations besides Herald's, under both of their prefixes) and
 * ServiceCIDRs; of Herald's own kinds, the metadata and their spec and status whole. `null` is accepted where the API server writes it for an empty list or an unset field (Go nil slices
 * and pointers). Sources: kubernetes/api core/v1/types.go, discovery/v1/types.go, networking/v1 ServiceCIDR.
 */
import type { ResourceKind } from './types.ts';
import { SERVICE_NAME_LABEL } from './types.ts';

/**
 * A field's shape:
 * - `text`, `number`: a string / number when present (not null); `text?`, `number?`, `flag?`: also null;
 * - `name`: a non-empty string, required; `opaque`: kept as it is, not checked (resourceVersion, timestamps);
 * - `{ term }`: a string of that shape (`text`, `text?`, `name`) that many objects repeat (a namespace, a node name,
 *   an enumerated value such as `LoadBalancer` or `IPv4`): the trimmer keeps one copy of each distinct value for all
 *   objects (src/k8s/terms.ts) instead of the copy each parsed object brings;
 * - `{ map }`: an object of strings (`map: 'text'`, labels) or of any values (`map: 'any'`, annotations: a bad value is
 *   a bad annotation, refused where it is read, src/k8s/annotations.ts, never a quarantine) or null; `keep` picks the
 *   keys the cache keeps; `terms`: its values are terms (label values repeat: `app`, `tier`);
 * - `{ list }`: an array of that shape, or null;
 * - `{ fields }`: an object with those fields (absent allowed; `nullable`: null too). Other fields are dropped by the
 *   trimmer and not checked by the screening;
 * - `shared` (on a list or fields): a small value many objects repeat word for word (an endpoint's conditions, a
 *   Service's ports): the trimmer keeps one frozen copy for all objects (src/k8s/terms.ts `sharedValue`).
 */
export type Shape =
  | 'text'
  | 'text?'
  | 'number'
  | 'number?'
  | 'flag?'
  | 'name'
  | 'opaque'
  | { readonly term: 'text' | 'text?' | 'name' }
  | { readonly map: 'text' | 'any'; readonly keep?: (key: string) => boolean; readonly terms?: boolean }
  | { readonly list: Shape; readonly shared?: boolean }
  | { readonly fields: Readonly<Record<string, Shape>>; readonly nullable?: boolean; readonly shared?: boolean };

/** Prefix of the annotations Herald reads (health checks, route attributes, IPAM). */
export const HERALD_ANNOTATION_PREFIX = 'herald.io/';

/**
 * MetalLB's Service annotations the allocator reads too with `compatibility.metallbAnnotations` (src/ipam/allocator.ts,
 * docs/metallb-migration.md), each under its name and its deprecated `metallb.universe.tf/` name (MetalLB's
 * controller/service.go reads the latter when the former is absent): kept on Services, whatever the setting.
 */
export const METALLB_SERVICE_ANNOTATIONS = {
  requestedIps: ['metallb.io/loadBalancerIPs', 'metallb.universe.tf/loadBalancerIPs'],
  pool: ['metallb.io/address-pool', 'metallb.universe.tf/address-pool'],
  sharingKey: ['metallb.io/allow-shared-ip', 'metallb.universe.tf/allow-shared-ip'],
} as const;
const metallbKept: ReadonlySet<string> = new Set(Object.values(METALLB_SERVICE_ANNOTATIONS).flat());

const labels: Shape = { map: 'text', terms: true };
const heraldAnnotations: Shape = { map: 'any', keep: (k) => k.startsWith(HERALD_ANNOTATION_PREFIX) };
const serviceAnnotations: Shape = { map: 'any', keep: (k) => k.startsWith(HERALD_ANNOTATION_PREFIX) || metallbKept.has(k) };
const texts: Shape = { list: 'text' };
const term: Shape = { term: 'text' };
const requiredTerm: Shape = { term: 'name' };
const terms: Shape = { list: term, shared: true };

/**
 * Herald's own kinds (herald.io, src/k8s/herald-kinds.ts): the metadata the merge and the status conditions read
 * (`generation` for `observedGeneration`), and `spec` and `status` whole: their fields are checked by
 * src/crd/objects.ts, which names the field at fault, not here.
 */
const heraldObject: Shape = {
  fields: {
    metadata: { fields: { name: 'name', namespace: 'text', resourceVersion: 'opaque', generation: 'opaque', deletionTimestamp: 'opaque', labels, annotations: heraldAnnotations } },
    spec: 'opaque',
    status: 'opaque',
  },
};

/** What Herald reads of each kind. */
export const SHAPES: Readonly<Record<ResourceKind, Shape>> = {
  Service: {
    fields: {
      metadata: { fields: { name: 'name', namespace: requiredTerm, resourceVersion: 'opaque', creationTimestamp: 'opaque', deletionTimestamp: 'opaque', labels, annotations: serviceAnnotations } },
      spec: {
        fields: {
          type: term,
          clusterIP: 'text',
          clusterIPs: texts,
          externalIPs: texts,
          externalTrafficPolicy: term,
          internalTrafficPolicy: term,
          healthCheckNodePort: 'number',
          loadBalancerClass: { term: 'text?' },
          loadBalancerIP: 'text',
          ipFamilies: terms,
          ipFamilyPolicy: term,
          ports: { list: { fields: { port: 'number', protocol: term } }, shared: true },
          selector: labels,
        },
      },
      status: { nullable: true, fields: { loadBalancer: { nullable: true, fields: { ingress: { list: { fields: { ip: 'text', ipMode: term } } } } } } },
    },
  },
  EndpointSlice: {
    fields: {
      metadata: { fields: { name: 'name', namespace: requiredTerm, resourceVersion: 'opaque', deletionTimestamp: 'opaque', labels: { map: 'text', keep: (k) => k === SERVICE_NAME_LABEL } } },
      addressType: term,
      endpoints: { list: { fields: { addresses: texts, conditions: { nullable: true, shared: true, fields: { ready: 'flag?', serving: 'flag?', terminating: 'flag?' } }, nodeName: { term: 'text?' } } } },
    },
  },
  Node: {
    fields: {
      // name: a term, as the endpoints' nodeName that names it.
      // uid: the owner reference of this node's BGPNodeStatus (src/status/node-status.ts).
      metadata: { fields: { name: requiredTerm, uid: 'opaque', resourceVersion: 'opaque', deletionTimestamp: 'opaque', labels, annotations: heraldAnnotations } },
      spec: { nullable: true, fields: { taints: { list: { fields: { key: term } } } } },
      // addresses: the InternalIP of each family is kube-proxy's probe address (docs/decisions.md "Node addresses").
      status: { nullable: true, fields: { conditions: { list: { fields: { type: term, status: term } } }, addresses: { list: { fields: { type: term, address: 'text' } } } } },
    },
  },
  ServiceCIDR: {
    fields: {
      metadata: { fields: { name: 'name', resourceVersion: 'opaque', deletionTimestamp: 'opaque' } },
      spec: { nullable: true, fields: { cidrs: texts } },
    },
  },
  BGPPeer: heraldObject,
  BGPAdvertisement: heraldObject,
  IPAddressPool: heraldObject,
  BGPNodeConfigOverride: heraldObject,
};
