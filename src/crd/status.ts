/**
 * The `status` of Herald's kinds (herald.io/v1alpha1), as zod schemas: generated into the CRDs' OpenAPI schemas
 * (schema.ts) and used to read them back (`herald peers --all-nodes`, src/cli/cluster.ts).
 *
 * - Every configuration object (BGPPeer, BGPAdvertisement, IPAddressPool, BGPNodeConfigOverride) carries
 *   `status.conditions` (metav1.Condition): `Valid` (Herald's own checks, beyond what the apiserver checks) and
 *   `InUse`, with counts for `kubectl get`, written by the elected status writer (src/status/, docs/decisions.md "Status").
 * - BGPNodeStatus, one per node and named after it, is written by that node's Herald only (src/status/node-status.ts):
 *   a summary under {@link MAX_NODE_STATUS_BYTES} whatever the cluster's size (its sessions, counts of VIPs announced
 *   and not announced by reason code, the last change), written when it changes; per-VIP detail stays on the node
 *   (admin API, `herald services`, and `--all-nodes` through the apiserver's pod proxy: src/cli/cluster.ts).
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
  nodes: z.number().int().min(0).optional().describe('Nodes that announce a VIP through this advertisement (their Herald pod Ready).'),
  announcedVIPs: z.number().int().min(0).optional().describe('The most VIPs one node announces through this advertisement (node statuses hold counts, not lists: a lower bound of the distinct VIPs).'),
});

export const poolStatusSchema = z.strictObject({
  conditions,
  assignedIPv4: z.number().int().min(0).optional().describe('IPv4 addresses of the pool assigned to Services.'),
  assignedIPv6: z.number().int().min(0).optional().describe('IPv6 addresses of the pool assigned to Services.'),
});

export const overrideStatusSchema = z.strictObject({ conditions });

/** Most characters of a session's `lastError` or of a problem kept in a BGPNodeStatus (the rest cut, with "…"). */
export const MAX_STATUS_TEXT = 160;

/** One BGP session of a node. */
export const sessionStatusSchema = z.strictObject({
  peer: z.string().max(253).describe('The peer name (BGPPeer, configuration file or override peer).'),
  source: z.enum(['file', 'BGPPeer', 'BGPNodeConfigOverride']).describe('Where the peer is configured.'),
  peerAddress: z.string().max(64),
  peerPort: z.number().int(),
  peerASN: z.number().int(),
  myASN: z.number().int().describe('Our AS number on this session.'),
  state: z.string().max(16).describe('RFC 4271 state: Idle, Connect, Active, OpenSent, OpenConfirm or Established.'),
  since: z.string().max(40).optional().describe('Since when the session is in this state (RFC 3339): its uptime when Established.'),
  lastError: z.string().max(MAX_STATUS_TEXT + 1).optional().describe('Why the session last went down, or the NOTIFICATION last exchanged.'),
  prefixesSent: z.number().int().min(0),
  prefixesReceived: z.number().int().min(0),
  bfd: z.string().max(16).optional().describe('BFD state (RFC 5880), when BFD is on.'),
});

/** VIPs announced through one advertisement on a node. */
export const advertisementCountSchema = z.strictObject({
  name: z.string().max(253).describe('The advertisement (file or BGPAdvertisement).'),
  vipsAnnounced: z.number().int().min(0),
});

/** VIPs not announced for one reason code on a node. */
export const reasonCountSchema = z.strictObject({
  reason: z.string().max(64).describe('A reason code, e.g. NoLocalReadyEndpoint.'),
  vips: z.number().int().min(0),
});

/** Most sessions one BGPNodeStatus lists (the rest counted in `sessionsOmitted`). */
export const MAX_STATUS_SESSIONS = 8;
/** Most advertisements one BGPNodeStatus counts VIPs for (the rest counted in `advertisementsOmitted`). */
export const MAX_STATUS_ADVERTISEMENTS = 8;
/** Most problems one BGPNodeStatus lists. */
export const MAX_STATUS_PROBLEMS = 4;
/** The most a BGPNodeStatus holds, serialized (its `status`), bytes: whatever the cluster's size (issue 31). */
export const MAX_NODE_STATUS_BYTES = 4096;

export const nodeStatusSpecSchema = z.strictObject({
  nodeName: z.string().min(1).describe('The node this status is of (also the object name).'),
});

export const nodeStatusSchema = z.strictObject({
  myASN: z.number().int().optional().describe("This node's AS number (sessions may override it)."),
  routerID: z.string().max(64).optional().describe("This node's BGP Identifier."),
  override: z.string().max(253).optional().describe('The BGPNodeConfigOverride in force on this node, if any.'),
  sessions: z.array(sessionStatusSchema).max(MAX_STATUS_SESSIONS).optional().describe(`Its BGP sessions, by peer name (at most ${MAX_STATUS_SESSIONS}).`),
  sessionsConfigured: z.number().int().min(0).optional(),
  sessionsEstablished: z.number().int().min(0).optional(),
  sessionsOmitted: z.number().int().min(0).optional().describe(`Sessions beyond the first ${MAX_STATUS_SESSIONS}, not listed.`),
  problems: z.array(z.string().max(MAX_STATUS_TEXT + 1)).max(MAX_STATUS_PROBLEMS).optional().describe('Configured peers this node cannot run, and why (e.g. a Secret it cannot read).'),
  vipsAnnounced: z.number().int().min(0).optional().describe('Service VIPs this node announces.'),
  vipsNotAnnounced: z.number().int().min(0).optional().describe('Service VIPs this node handles and does not announce now, and those refused as tenant input (PrefixNotAllowed, AttributeNotAllowed); a VIP no advertisement selects for it is not counted.'),
  notAnnounced: z.array(reasonCountSchema).max(64).optional().describe('VIPs not announced, by reason code (docs/kubernetes.md), most first: a VIP counts under each of its reasons. `herald services` on the node, or `herald services --all-nodes`, names them.'),
  advertisements: z.array(advertisementCountSchema).max(MAX_STATUS_ADVERTISEMENTS).optional().describe('VIPs announced through each advertisement.'),
  advertisementsOmitted: z.number().int().min(0).optional(),
  heraldVersion: z.string().max(64).optional(),
  lastChange: z.string().max(40).optional().describe('When what this status shows last changed (RFC 3339). Nothing is written while nothing changes: whether the node runs Herald is its pod\'s Ready condition.'),
});

export type ConditionStatus = z.output<typeof conditionSchema>;
export type SessionStatus = z.output<typeof sessionStatusSchema>;
export type NodeStatus = z.output<typeof nodeStatusSchema>;
export type ReasonCount = z.output<typeof reasonCountSchema>;
export type AdvertisementCount = z.output<typeof advertisementCountSchema>;
export type PeerStatusFields = z.output<typeof peerStatusSchema>;
export type AdvertisementStatusFields = z.output<typeof advertisementStatusSchema>;
export type PoolStatusFields = z.output<typeof poolStatusSchema>;
