/**
 * Herald's kinds (herald.io/v1alpha1) as views of the configuration's zod schema (src/config/schema.ts): which section each kind
 * holds, how its field names differ from the file's, the cross-field rules the apiserver checks (CEL) and the
 * printer columns. schema.ts generates the CRDs from this; objects.ts reads objects back with the same map.
 *
 * Names (docs/decisions.md "Configuration sources"): a field keeps the file's name unless MetalLB names the same
 * concept otherwise (`peerAddress`, `peerASN`, `myASN`, ...); then the CRD uses MetalLB's name, and the field maps below
 * are the one place that knows both (a peer's: its table, src/config/peer-fields.ts, with the defaults and ranges of
 * bgp/peer-config.ts in its CEL rules). Fields of the file that make no sense in a cluster-wide object are left out (a
 * password from a node's file or environment; the single-selector forms, `nodeSelectors`/`serviceSelectors` being
 * MetalLB's); an object's `name` is its metadata.name.
 */
import type { z } from 'zod';
import type { HeraldKind } from '../k8s/herald-kinds.ts';
import { advertisementSchema, nodeOverrideSchema, peerSchema, poolSchema } from '../config/schema.ts';
import { crdOmitted, crdRenames } from '../config/peer-fields.ts';
import { PEER_OPTIONS, rangeText } from '../../bgp/main-thread.ts';
import type { SubOption } from '../../bgp/main-thread.ts';
import { advertisementStatusSchema, nodeStatusSchema, nodeStatusSpecSchema, overrideStatusSchema, peerStatusSchema, poolStatusSchema } from './status.ts';

/**
 * File names → CRD names of one object (or list item). `rename` maps a file field to its CRD path (one or more
 * keys: `['serviceAllocation', 'priority']`); `omit` lists file fields absent from the CRD; `nested` maps the fields
 * of a nested object or of a list's items.
 */
export interface FieldMap {
  readonly rename?: Readonly<Record<string, readonly string[]>>;
  /** Descriptions of the objects a multi-key rename creates (`serviceAllocation`). */
  readonly groups?: Readonly<Record<string, string>>;
  readonly omit?: readonly string[];
  readonly nested?: Readonly<Record<string, FieldMap>>;
}

/** One `x-kubernetes-validations` rule (apiextensions.k8s.io/v1 ValidationRule). */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** JSONPath of the field the error names, relative to where the rule sits (e.g. `.keepaliveTime`). */
  readonly fieldPath?: string;
}

/** An additionalPrinterColumns entry. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

/** Everything the CRD of one kind is generated from. */
export interface KindSpec {
  readonly kind: HeraldKind;
  readonly singular: string;
  readonly description: string;
  /** The zod schema of `spec`: a configuration item, or the node status object's spec. */
  readonly spec: z.ZodType;
  /** The section of the configuration file the objects add to (undefined: not configuration). */
  readonly section?: 'peers' | 'advertisements' | 'pools';
  /** The item's field filled from the object's metadata.labels (absent from the CRD's spec: `fields.omit`). */
  readonly labelsField?: string;
  readonly fields: FieldMap;
  readonly status: z.ZodType;
  /** CEL rules by CRD path under `spec` ('' = spec itself; `peers[]` = the items of list `peers`). */
  readonly rules: Readonly<Record<string, readonly CelRule[]>>;
  /** Rules on the whole object (they may read metadata.name). */
  readonly rootRules?: readonly CelRule[];
  /** `x-kubernetes-list-type` (and map keys) by CRD path under `spec`. */
  readonly listTypes?: Readonly<Record<string, { readonly type: 'set' } | { readonly type: 'map'; readonly keys: readonly string[] }>>;
  readonly columns: readonly PrinterColumn[];
}

/** The peer fields as BGPPeer (and a BGPNodeConfigOverride's peers) name them: MetalLB's BGPPeer names (the table). */
const PEER_RENAMES = crdRenames();

/** The hold time a peer without one has, in CEL. */
const HOLD_TIME = `(has(self.holdTime) ? self.holdTime : ${PEER_OPTIONS.holdTimeSec.default})`;

/** The cross-field rules of one peer (src/config/semantic.ts `semanticChecks`) that CEL can express. */
const PEER_OBJECT_RULES: readonly CelRule[] = [
  {
    rule: `!has(self.keepaliveTime) || ${HOLD_TIME} == 0 || self.keepaliveTime < ${HOLD_TIME}`,
    message: 'must be below holdTime',
    fieldPath: '.keepaliveTime',
  },
  { rule: '!(has(self.ttlSecurity) && self.ttlSecurity && has(self.ebgpMultihop))', message: 'cannot be combined with ebgpMultihop', fieldPath: '.ttlSecurity' },
  { rule: '!has(self.ebgpMultihop) || !has(self.myASN) || self.myASN != self.peerASN', message: 'applies to eBGP peers only (peerASN equals myASN)', fieldPath: '.ebgpMultihop' },
  {
    rule: '!has(self.sourceAddress) || !isIP(self.sourceAddress) || !isIP(self.peerAddress) || ip(self.sourceAddress).family() == ip(self.peerAddress).family()',
    message: 'must be of the same address family as peerAddress',
    fieldPath: '.sourceAddress',
  },
  {
    rule: '!has(self.bfd) || !has(self.bfd.minimumTtl) || (has(self.bfd.multihop) ? self.bfd.multihop : (has(self.ebgpMultihop) && self.ebgpMultihop > 1))',
    message: 'applies to multihop BFD only (single-hop always requires TTL 255); set bfd.multihop or remove it',
    fieldPath: '.bfd.minimumTtl',
  },
];

/** Value rules of one peer's fields that CEL can express (the zod refinements of src/config/schema.ts). */
const PEER_FIELD_RULES: Readonly<Record<string, readonly CelRule[]>> = {
  peerAddress: [{ rule: 'isIP(self)', message: 'must be an IP address (without a zone id)' }],
  sourceAddress: [{ rule: 'isIP(self)', message: 'must be an IP address (without a zone id)' }],
  nextHop: [{ rule: 'isIP(self) && ip(self).family() == 4', message: 'must be an IPv4 address' }],
  nextHopV6: [{ rule: 'isIP(self) && ip(self).family() == 6', message: 'must be an IPv6 address' }],
  holdTime: [{ rule: celRange(PEER_OPTIONS.holdTimeSec), message: `must be ${rangeText(PEER_OPTIONS.holdTimeSec)} (seconds)` }],
};

/** A range of bgp/peer-config.ts as a CEL rule on `self`: "self == 0 || (self >= 3 && self <= 65535)". */
function celRange(o: SubOption): string {
  return (rangeText(o) ?? '')
    .split(' or ')
    .map((part) => {
      const [from, to] = part.split('..');
      return to === undefined ? `self == ${from}` : `(self >= ${from} && self <= ${to})`;
    })
    .join(' || ');
}

/** The rules of a peer placed at `prefix` (`''` for a BGPPeer's spec, `peers[]` for an override's peers). */
function peerRules(prefix: string): Record<string, readonly CelRule[]> {
  const at = (field: string) => (prefix === '' ? field : `${prefix}.${field}`);
  return { [prefix]: PEER_OBJECT_RULES, ...Object.fromEntries(Object.entries(PEER_FIELD_RULES).map(([f, r]) => [at(f), r])) };
}

/** A CIDR written with its network address (schema.ts refuses host bits the same way). */
const HOST_BITS: CelRule = { rule: '!isCIDR(self) || cidr(self) == cidr(self).masked()', message: 'host bits set: write the network address (e.g. 10.1.0.0/24, not 10.1.0.1/24)' };

const VALID = { name: 'Valid', type: 'string', jsonPath: '.status.conditions[?(@.type=="Valid")].status', description: "Passed Herald's own checks" } as const;
const IN_USE = { name: 'In Use', type: 'string', jsonPath: '.status.conditions[?(@.type=="InUse")].status' } as const;
const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' } as const;

export const BGP_PEER: KindSpec = {
  kind: 'BGPPeer',
  singular: 'bgppeer',
  description: 'A BGP neighbour of the nodes its nodeSelectors select (all nodes without them), as MetalLB\'s BGPPeer.',
  spec: peerSchema,
  section: 'peers',
  fields: { rename: PEER_RENAMES, omit: crdOmitted('object') },
  status: peerStatusSchema,
  rules: peerRules(''),
  rootRules: [{ rule: 'self.metadata.name.size() <= 63', message: 'metadata.name: a peer name is at most 63 characters (it names the session in logs, metrics and advertisements)' }],
  listTypes: { families: { type: 'set' } },
  columns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.peerAddress' },
    { name: 'Peer ASN', type: 'integer', jsonPath: '.spec.peerASN' },
    { name: 'My ASN', type: 'integer', jsonPath: '.spec.myASN' },
    VALID,
    { name: 'Nodes', type: 'integer', jsonPath: '.status.nodes', description: 'Selected nodes running Herald' },
    { name: 'Established', type: 'integer', jsonPath: '.status.establishedNodes', description: 'Nodes whose session is Established' },
    AGE,
  ],
};

export const BGP_ADVERTISEMENT: KindSpec = {
  kind: 'BGPAdvertisement',
  singular: 'bgpadvertisement',
  description: 'Which Service addresses to announce, from which nodes, to which peers, with which attributes (MetalLB\'s BGPAdvertisement).',
  spec: advertisementSchema,
  section: 'advertisements',
  fields: { omit: ['name', 'nodeSelector', 'serviceSelector'] },
  status: advertisementStatusSchema,
  rules: {
    'allowedPrefixes[]': [{ rule: 'isCIDR(self)', message: 'must be a CIDR prefix like 10.0.0.0/24 or 2001:db8::/64' }, HOST_BITS],
  },
  listTypes: { addressKinds: { type: 'set' } },
  columns: [
    { name: 'Kinds', type: 'string', jsonPath: '.spec.addressKinds' },
    { name: 'Peers', type: 'string', jsonPath: '.spec.peers' },
    VALID,
    { name: 'Nodes', type: 'integer', jsonPath: '.status.nodes', description: 'Nodes announcing through it' },
    { name: 'VIPs', type: 'integer', jsonPath: '.status.announcedVIPs', description: 'VIPs announced through it' },
    AGE,
  ],
};

export const IP_ADDRESS_POOL: KindSpec = {
  kind: 'IPAddressPool',
  singular: 'ipaddresspool',
  description: 'Addresses the elected allocator assigns to LoadBalancer Services (MetalLB\'s IPAddressPool).',
  spec: poolSchema,
  section: 'pools',
  labelsField: 'labels',
  fields: {
    omit: ['name', 'serviceSelector', 'labels'],
    rename: {
      priority: ['serviceAllocation', 'priority'],
      namespaces: ['serviceAllocation', 'namespaces'],
      namespaceSelectors: ['serviceAllocation', 'namespaceSelectors'],
      serviceSelectors: ['serviceAllocation', 'serviceSelectors'],
    },
    groups: { serviceAllocation: 'Which Services this pool serves, and in which order (MetalLB\'s serviceAllocation).' },
  },
  status: poolStatusSchema,
  rules: {
    'addresses[]': [
      {
        rule: "isCIDR(self) || (self.split('-').size() == 2 && isIP(self.split('-')[0].trim()) && isIP(self.split('-')[1].trim()) && ip(self.split('-')[0].trim()).family() == ip(self.split('-')[1].trim()).family())",
        message: 'must be a CIDR or a range "A-B" of one family',
      },
      HOST_BITS,
    ],
  },
  columns: [
    { name: 'Addresses', type: 'string', jsonPath: '.spec.addresses' },
    { name: 'Auto Assign', type: 'boolean', jsonPath: '.spec.autoAssign' },
    VALID,
    { name: 'IPv4', type: 'integer', jsonPath: '.status.assignedIPv4', description: 'IPv4 addresses assigned' },
    { name: 'IPv6', type: 'integer', jsonPath: '.status.assignedIPv6', description: 'IPv6 addresses assigned' },
    AGE,
  ],
};

export const BGP_NODE_CONFIG_OVERRIDE: KindSpec = {
  kind: 'BGPNodeConfigOverride',
  singular: 'bgpnodeconfigoverride',
  description: "One node's own BGP settings, named after the node (as Cilium's CiliumBGPNodeConfigOverride): its AS number, router ID and peers of its own.",
  spec: nodeOverrideSchema,
  fields: {
    rename: { localAs: ['myASN'], routerId: ['routerID'] },
    // a node's own peers run on it: no node selectors
    nested: { peers: { rename: PEER_RENAMES, omit: [...crdOmitted('list item'), 'nodeSelectors'] } },
  },
  status: overrideStatusSchema,
  rules: {
    routerID: [{ rule: "isIP(self) && ip(self).family() == 4 && self != '0.0.0.0'", message: 'must be an IPv4 address other than 0.0.0.0 (RFC 6286 §2.1)' }],
    'sourceAddresses[]': [{ rule: 'isIP(self)', message: 'must be an IP address (without a zone id)' }],
    sourceAddresses: [{ rule: 'self.size() < 2 || !isIP(self[0]) || !isIP(self[1]) || ip(self[0]).family() != ip(self[1]).family()', message: 'must list at most one address per family' }],
    ...peerRules('peers[]'),
  },
  listTypes: { peers: { type: 'map', keys: ['name'] }, 'peers[].families': { type: 'set' }, sourceAddresses: { type: 'set' } },
  columns: [
    { name: 'My ASN', type: 'integer', jsonPath: '.spec.myASN' },
    { name: 'Router ID', type: 'string', jsonPath: '.spec.routerID' },
    VALID,
    IN_USE,
    AGE,
  ],
};

export const BGP_NODE_STATUS: KindSpec = {
  kind: 'BGPNodeStatus',
  singular: 'bgpnodestatus',
  description: "One node's BGP sessions and Service VIPs as its Herald sees them, named after the node and written by it (read-only for users).",
  spec: nodeStatusSpecSchema,
  fields: {},
  status: nodeStatusSchema,
  rules: {},
  rootRules: [{ rule: 'self.metadata.name == self.spec.nodeName', message: 'a BGPNodeStatus is named after its node (metadata.name equals spec.nodeName)' }],
  columns: [
    { name: 'My ASN', type: 'integer', jsonPath: '.status.myASN' },
    { name: 'Router ID', type: 'string', jsonPath: '.status.routerID' },
    { name: 'Established', type: 'integer', jsonPath: '.status.sessionsEstablished' },
    { name: 'Sessions', type: 'integer', jsonPath: '.status.sessionsConfigured' },
    { name: 'Announced', type: 'integer', jsonPath: '.status.vipsAnnounced', description: 'VIPs announced from this node' },
    { name: 'Not Announced', type: 'integer', jsonPath: '.status.vipsNotAnnounced', description: 'VIPs this node handles and does not announce now' },
    { name: 'Changed', type: 'date', jsonPath: '.status.lastChange', description: 'When what the status shows last changed' },
  ],
};

/** Every kind, in the order of the generated files and documents. */
export const KINDS: readonly KindSpec[] = [BGP_PEER, BGP_ADVERTISEMENT, IP_ADDRESS_POOL, BGP_NODE_CONFIG_OVERRIDE, BGP_NODE_STATUS];

/** The spec of `kind`. @throws Error for a kind without one (none: every HeraldKind is listed). */
export function kindSpec(kind: HeraldKind): KindSpec {
  const k = KINDS.find((x) => x.kind === kind);
  if (!k) throw new Error(`no kind ${kind}`);
  return k;
}
