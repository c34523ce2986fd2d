/**
 * JSON Schemas of the admin API requests and responses. The route table in `server.ts` uses them
 * for fastify validation/serialisation, and `openapi.ts` assembles /openapi.json from the same
 * objects, so the published contract is the enforced one.
 */

export const str = { type: 'string' } as const;
export const int = { type: 'integer' } as const;
export const num = { type: 'number' } as const;
export const bool = { type: 'boolean' } as const;
export const strList = { type: 'array', items: str } as const;

/** Every error body: `{statusCode, error, message}`. */
export const errorSchema = {
  type: 'object',
  required: ['statusCode', 'error', 'message'],
  properties: { statusCode: int, error: str, message: str },
} as const;

export const okSchema = {
  type: 'object',
  required: ['ok'],
  properties: { ok: bool, message: str },
} as const;

export const healthSchema = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: bool,
    reasons: strList,
    quarantined: { ...strList, description: 'Objects treated as absent because Herald cannot use them: "Kind namespace/name: reason" (readiness is not affected)' },
    refused: { ...strList, description: 'Input refused whole, its last good version in force: "file PATH:LINE: reason", "Kind name: reason" (readiness is not affected)' },
  },
} as const;

export const statusSchema = {
  type: 'object',
  required: ['version', 'node', 'routerId', 'localAs', 'startedAt', 'uptimeSec', 'ready', 'notReady', 'drained', 'drain', 'peers', 'routes'],
  properties: {
    version: str,
    node: str,
    routerId: str,
    localAs: int,
    startedAt: str,
    uptimeSec: num,
    ready: bool,
    notReady: strList,
    drained: bool,
    drain: { ...strList, description: 'What holds the node drained: the herald.io/drain annotation, the stateDir record, a departure' },
    peers: { type: 'object', properties: { configured: int, established: int } },
    routes: { type: 'object', properties: { desired: int } },
    lastReload: { type: 'object', properties: { at: str, ok: bool, errors: strList } },
    forbidden: { ...strList, description: 'Kubernetes API calls refused with 403 (RBAC): "call: apiserver message"' },
    quarantined: {
      type: 'array',
      description: 'Objects the controller cannot use, treated as absent (an EndpointSlice: its endpoints count as not ready)',
      items: { type: 'object', properties: { kind: str, name: str, reason: str, since: str } },
    },
    refused: {
      type: 'array',
      description: 'Input refused whole, whose last good version (or nothing) stays in force: manifest files that cannot be read or parsed (kind "file"), configuration objects every node ignores (their kind)',
      items: { type: 'object', required: ['kind', 'name', 'reason'], properties: { kind: str, name: str, line: int, reason: str } },
    },
  },
} as const;

export const routeSchema = {
  type: 'object',
  required: ['peer', 'prefix', 'family'],
  properties: {
    peer: str,
    prefix: str,
    family: str,
    nextHop: str,
    origin: str,
    asPath: { type: 'array', items: int },
    localPref: int,
    med: int,
    communities: strList,
    largeCommunities: strList,
    extendedCommunities: { ...strList, description: 'In the config text: lb:AS:BYTES_PER_SECOND[:non-transitive], rt:AS:N, ro:…, 0x + 16 hex digits' },
  },
} as const;

export const vipAttributesSchema = {
  type: 'object',
  description: 'What one advertisement sends for the VIP from this node when traffic steering applies (docs/traffic-steering.md)',
  required: ['advertisement', 'prefix', 'announced'],
  properties: {
    advertisement: str,
    prefix: str,
    announced: { type: 'boolean', description: 'false: the maxNodesPerVip choice picked other nodes' },
    med: int,
    asPathPrepend: { type: 'integer', description: 'Extra copies of the local AS toward eBGP peers' },
    linkBandwidth: { type: 'number', description: 'Link bandwidth, bytes per second (weighting: endpoints)' },
    endpoints: { type: 'object', required: ['local', 'total'], properties: { local: int, total: int } },
    locality: { type: 'string', description: 'preferred or fallback' },
    choice: { type: 'object', description: 'maxNodesPerVip: the bound, eligible nodes, the chosen ones by rank', required: ['maxNodes', 'eligible', 'nodes'], properties: { maxNodes: int, eligible: int, nodes: strList } },
    communities: strList,
    largeCommunities: strList,
    heldUntil: { type: 'string', description: 'ISO 8601: these attributes go out then (attributeChangeInterval); the peers still have the previous ones' },
    withheld: { ...strList, description: 'What the Services behind the prefix asked for that is not sent, and why' },
  },
} as const;

const causeSchema = { type: 'object', required: ['code', 'message'], properties: { code: str, message: str, since: str, until: str } } as const;
const reasonSchema = { type: 'object', required: ['code', 'message'], properties: { code: str, message: str, causes: { type: 'array', items: causeSchema }, advertisement: str } } as const;

export const serviceSchema = {
  type: 'object',
  required: ['service', 'vips', 'reasons'],
  properties: {
    service: { type: 'string', description: 'namespace/name' },
    vips: {
      type: 'array',
      items: {
        type: 'object',
        required: ['address', 'kind', 'announced', 'reasons'],
        properties: { address: str, kind: str, announced: bool, reasons: { type: 'array', items: reasonSchema }, attributes: { type: 'array', items: vipAttributesSchema } },
      },
    },
    reasons: { type: 'array', items: reasonSchema },
  },
} as const;

export const resetBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { soft: { type: 'boolean', description: 'true: re-send the Adj-RIB-Out (route refresh out); false: Cease/Administrative Reset and reconnect' } },
} as const;

export const emptyBodySchema = { type: 'object', additionalProperties: false, properties: {} } as const;
export const drainBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    reason: { type: 'string', minLength: 1, maxLength: 253, description: 'Why (the value of the herald.io/drain annotation in Kubernetes mode; default "herald drain").' },
  },
} as const;

export const peerNameParams = { type: 'object', required: ['name'], properties: { name: str } } as const;
export const serviceParams = { type: 'object', required: ['namespace', 'name'], properties: { namespace: str, name: str } } as const;
export const routesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { peer: { type: 'string', description: 'Only this peer' }, prefix: { type: 'string', description: 'Only this prefix (exact, canonical) or routes covered by it' } },
} as const;

export const healthCheckSchema = {
  type: 'object',
  required: ['key', 'gate', 'scope', 'kind', 'target', 'state'],
  properties: {
    key: str,
    gate: str,
    scope: str,
    kind: str,
    target: str,
    state: { type: 'string', description: 'unknown, up, down or invalid' },
    since: str,
    intervalSec: num,
    rise: int,
    fall: int,
    consecutiveOk: int,
    consecutiveFail: int,
    latencyMs: num,
    lastFailure: { type: 'object', properties: { code: str, message: str } },
  },
} as const;
