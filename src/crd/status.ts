/**
 * The `status` of Herald's kinds (herald.io/v1alpha1), as zod schemas: generated into the CRDs' OpenAPI schemas
 * (schema.ts) and used to read them back (`herald peers --all-nodes`, src/cli/cluster.ts).
 *
 * - Every configuration object (BGPPeer, BGPAdvertisement, IPAddressPool, BGPNodeConfigOverride) carries
 *   `status.conditions` (metav1.Condition): `Valid` (Herald's own checks, beyond what the apiserver checks) and
 *   `InUse`, with counts for `kubectl get`, written by the elected status writer (src/status/, docs/decisions.md "Status").
 * - BGPNodeStatus, one per node and named after it, is written by that node's Herald only (src/status/node-status.ts):
 *   its sessions and its VIPs with their reason codes.
 *
 * Times are RFC 3339 strings (UTC).
 */
import { z } from 'zod';

/** metav1.Condition (apimachinery pkg/apis/meta/v1 types.go). */
export const conditionSchema = z.strictObject({
  type: z.string().min(1).max(316).describe('Valid or InUse.'),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.number().int().min(0).optional().describe('The metadata.generation the condition was computed from.'),
  lastTransitionTime: z.string().describe('When status last changed (RFC 3339).'),
  reason: z.string().min(1).max(1024).describe('A CamelCase code.'),
  message: z.string().max(32768).describe('What an operator should know, e.g. which field is wrong and how to fix it.'),
});

const conditions = z.array(conditionSchema).max(8).optional().describe('Valid: passed Herald\'s own checks (else ignored, the message names the field and the fix). InUse: see the kind. Written by the elected status writer (Lease herald-status).');

export const peerStatusSchema = z.strictObject({
  conditions,
  nodes: z.number().int().min(0).optional().describe('Nodes running Herald that this peer selects (spec.nodeSelectors): each runs a session with it.'),
  establishedNodes: z.number().int().min(0).optional().describe('Of those, the nodes whose session with this peer is Established (by their BGPNodeStatus).'),
});

export const advertisementStatusSchema = z.strictObject({
  conditions,
  nodes: z.number().int().min(0).optional().describe('Nodes that announce a VIP through this advertisement.'),
  announcedVIPs: z.number().int().min(0).optional().describe('Distinct VIPs announced through this advertisement (by any node).'),
});

export const poolStatusSchema = z.strictObject({
  conditions,
  assignedIPv4: z.number().int().min(0).optional().describe('IPv4 addresses of the pool assigned to Services.'),
  assignedIPv6: z.number().int().min(0).optional().describe('IPv6 addresses of the pool assigned to Services.'),
});

export const overrideStatusSchema = z.strictObject({ conditions });

/** One BGP session of a node. */
export const sessionStatusSchema = z.strictObject({
  peer: z.string().describe('The peer name (BGPPeer, configuration file or override peer).'),
  source: z.enum(['file', 'BGPPeer', 'BGPNodeConfigOverride']).describe('Where the peer is configured.'),
  peerAddress: z.string(),
  peerPort: z.number().int(),
  peerASN: z.number().int(),
  myASN: z.number().int().describe('Our AS number on this session.'),
  state: z.string().describe('RFC 4271 state: Idle, Connect, Active, OpenSent, OpenConfirm or Established.'),
  since: z.string().optional().describe('Since when the session is in this state (RFC 3339): its uptime when Established.'),
  lastError: z.string().optional().describe('Why the session last went down, or the NOTIFICATION last exchanged.'),
  prefixesSent: z.number().int().min(0),
  prefixesReceived: z.number().int().min(0),
  bfd: z.string().optional().describe('BFD state (RFC 5880), when BFD is on.'),
});

/** One VIP of a Service on a node. */
export const vipStatusSchema = z.strictObject({
  service: z.string().describe('namespace/name'),
  address: z.string(),
  kind: z.string().describe('loadBalancer, externalIP or clusterIP.'),
  announced: z.boolean(),
  reasons: z.array(z.string()).describe('Reason codes (docs/kubernetes.md), e.g. Advertised, NoLocalReadyEndpoint.'),
  advertisements: z.array(z.string()).optional().describe('Advertisements it is announced through.'),
});

/** A BGPNodeStatus not written for this long (ms) is stale: its node's Herald is likely not running (it rewrites an unchanged status every minute). */
export const STATUS_STALE_MS = 180_000;

/** Most VIPs one BGPNodeStatus lists (an object is at most 1.5 MiB in etcd); the rest are counted in vipsOmitted. */
export const MAX_STATUS_VIPS = 2000;

export const nodeStatusSpecSchema = z.strictObject({
  nodeName: z.string().min(1).describe('The node this status is of (also the object name).'),
});

export const nodeStatusSchema = z.strictObject({
  myASN: z.number().int().optional().describe("This node's AS number (sessions may override it)."),
  routerID: z.string().optional().describe("This node's BGP Identifier."),
  override: z.string().optional().describe('The BGPNodeConfigOverride in force on this node, if any.'),
  sessions: z.array(sessionStatusSchema).optional(),
  sessionsConfigured: z.number().int().min(0).optional(),
  sessionsEstablished: z.number().int().min(0).optional(),
  problems: z.array(z.string()).optional().describe('Configured peers this node cannot run, and why (e.g. a Secret it cannot read).'),
  vips: z.array(vipStatusSchema).max(MAX_STATUS_VIPS).optional().describe(`Service VIPs and this node's decision (at most ${MAX_STATUS_VIPS}; announced ones first).`),
  vipsAnnounced: z.number().int().min(0).optional(),
  vipsOmitted: z.number().int().min(0).optional().describe(`VIPs beyond the first ${MAX_STATUS_VIPS}, not listed.`),
  heraldVersion: z.string().optional(),
  lastUpdate: z.string().optional().describe('When this node last wrote its status (RFC 3339).'),
});

export type ConditionStatus = z.output<typeof conditionSchema>;
export type SessionStatus = z.output<typeof sessionStatusSchema>;
export type VipStatus = z.output<typeof vipStatusSchema>;
export type NodeStatus = z.output<typeof nodeStatusSchema>;
export type PeerStatusFields = z.output<typeof peerStatusSchema>;
export type AdvertisementStatusFields = z.output<typeof advertisementStatusSchema>;
export type PoolStatusFields = z.output<typeof poolStatusSchema>;
