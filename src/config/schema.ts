/**
 * Herald's configuration file: one zod schema (the single source of truth for validation, the
 * TypeScript types, `docs/config.schema.json` and `docs/configuration.md`).
 *
 * Conventions: durations are **seconds** (fractions allowed where said), names are camelCase,
 * unknown fields are errors (a typo must not silently fall back to a default). Structural checks
 * live in the zod schema; cross-field checks (unique names, references between sections, address
 * families) live in semantic.ts (`semanticErrors`). `load.ts` runs both and formats every problem as
 * `path: message`, e.g. `peers[1].holdTime: must be 0 or 3..65535`.
 *
 * A peer's fields map to the Speaker's RFC 4271 names by their table, peer-fields.ts (`holdTime` → holdTimeSec,
 * `nextHop` → nextHopIPv4, ...), and their defaults and ranges are bgp/'s (bgp/peer-config.ts); `routerId` is the
 * BGP Identifier. Durations of a peer are whole seconds (RFC 4271), of BFD milliseconds (RFC 5880).
 */
import { z } from 'zod';
import type { Family, SubOption } from '../../bgp/main-thread.ts';
import { BFD_OPTIONS, GRACEFUL_RESTART_OPTIONS, inRange, MAX_COMMUNITY_OCTETS, parseCommunity, parseLargeCommunity, PEER_OPTIONS, rangeText } from '../../bgp/main-thread.ts';
import { addressValue, canonicalCIDR, ipFamilyOf, parseNodeIps } from '../net/address.ts';
import { parseCommunityRange, parseLargeCommunityRange } from '../net/community-ranges.ts';
import { parseBandwidthText, parseExtendedCommunityText } from './extended-communities.ts';

// ---------------------------------------------------------------------------------------------
// Leaf validators
// ---------------------------------------------------------------------------------------------

/** A zod error callback: "required" for a missing value, else `text`. */
function msg(text: string): { error: (iss: { input?: unknown }) => string } {
  return { error: (iss) => (iss.input === undefined ? 'required' : text) };
}

/** The largest unsigned 32-bit value (an AS number, a MED, a LOCAL_PREF). */
export const MAX_U32 = 4294967295;

/** AS_TRANS (RFC 6793 §9): the 2-octet stand-in for a 4-octet AS number, never an AS of its own. */
const AS_TRANS = 23456;

/** An AS number, 1..4294967295 (RFC 6793 four-octet AS), not AS_TRANS. */
const asNumber = z
  .number(msg('must be an AS number (integer 1..4294967295)'))
  .int(msg('must be an AS number (integer 1..4294967295)'))
  .min(1, msg('must be an AS number (integer 1..4294967295)'))
  .max(MAX_U32, msg('must be an AS number (integer 1..4294967295)'))
  .refine((n) => n !== AS_TRANS, msg(`must not be ${AS_TRANS}: AS_TRANS (RFC 6793) stands in for a 4-octet AS number in 2-octet fields and is no AS of its own; use the real AS number`));

/**
 * An address field. `ipFamilyOf` (node's `net.isIP`) accepts an IPv6 zone id (`fe80::1%eth0`); the BGP codec, the next hop
 * attribute and the session sockets take none, so a zone id is refused here with that reason.
 */
function address(what: 'an IP address' | 'an IPv4 address' | 'an IPv6 address', test: (s: string) => boolean) {
  // The longest address text is 45 characters (an IPv4-mapped IPv6 address); the bound also bounds the CRDs' CEL cost.
  return z.string().max(64, { error: `must be ${what}`, abort: true }).superRefine((s, ctx) => {
    const zone = s.indexOf('%');
    if (zone >= 0) ctx.addIssue({ code: 'custom', message: `must be ${what} without a zone id ("${s.slice(zone)}"): BGP next hops and Herald's sockets take no interface scope` });
    else if (!test(s)) ctx.addIssue({ code: 'custom', message: `must be ${what}` });
  });
}
const ipAddress = address('an IP address', (s) => ipFamilyOf(s) !== undefined);
const ipv4Address = address('an IPv4 address', (s) => ipFamilyOf(s) === 'IPv4');
const ipv6Address = address('an IPv6 address', (s) => ipFamilyOf(s) === 'IPv6');

const port = z
  .number(msg('must be a TCP port (integer 1..65535)'))
  .int(msg('must be a TCP port (integer 1..65535)'))
  .min(1, msg('must be a TCP port (integer 1..65535)'))
  .max(65535, msg('must be a TCP port (integer 1..65535)'));

const uint32 = (what: string) =>
  z
    .number(msg(`must be ${what} (integer 0..4294967295)`))
    .int(msg(`must be ${what} (integer 0..4294967295)`))
    .min(0, msg(`must be ${what} (integer 0..4294967295)`))
    .max(MAX_U32, msg(`must be ${what} (integer 0..4294967295)`));

/** Longest duration Herald takes for a timer or a window, seconds (one day; timers of Node.js end at 24.8 days). */
export const MAX_SECONDS = 86400;
/** Longest health-check interval or timeout, seconds. */
export const MAX_PROBE_SECONDS = 3600;

/** Positive number of seconds up to `max`, fractions allowed (NaN and infinities are no numbers to zod). */
const positiveSeconds = (max = MAX_SECONDS) =>
  z.number(msg('must be a number of seconds')).positive(msg('must be > 0 (seconds)')).max(max, msg(`must be at most ${max} (seconds)`));
/** Non-negative number of seconds up to `max`, fractions allowed. */
const nonNegativeSeconds = (max = MAX_SECONDS) =>
  z.number(msg('must be a number of seconds')).min(0, msg('must be >= 0 (seconds)')).max(max, msg(`must be at most ${max} (seconds)`));
/**
 * An integer option of a peer, its range from bgp/peer-config.ts; `what(range)` is the message ("must be a TTL
 * (integer 1..255)"). A range with holes (`not`: the hold time) is a refinement, any other min/max (so that the JSON
 * Schema and the CRDs carry it).
 */
function integerOption(o: SubOption, what: (range: string) => string) {
  const range = rangeText(o);
  if (range === undefined || o.min === undefined || o.max === undefined) throw new Error('integerOption: an option with a range');
  const m = msg(what(range));
  const n = z.number(m).int(m);
  return o.not !== undefined && o.not.length > 0 ? n.refine((v) => inRange(o, v), m) : n.min(o.min, m).max(o.max, m);
}
/** A time option in whole seconds ("must be an integer number of seconds 1..65535"). */
const wholeSeconds = (o: SubOption) => integerOption(o, (r) => `must be an integer number of seconds ${r}`);
/** A TTL option ("must be a TTL (integer 1..255)"). */
const ttl = (o: SubOption) => integerOption(o, (r) => `must be a TTL (integer ${r})`);
/** An integer `min`..`max` ("must be an integer 1..100"). */
function integerIn(min: number, max: number) {
  const m = msg(`must be an integer ${min}..${max}`);
  return z.number(m).int(m).min(min, m).max(max, m);
}
/** Consecutive probe results (rise, fall): 1..100. */
const probeCount = integerIn(1, 100);

function isCIDR(s: string): boolean {
  return cidrProblem(s) === undefined;
}

/** Why `s` is not a CIDR prefix (canonicalCIDR's message: no length, a bad address, a length out of range), or undefined. */
function cidrProblem(s: string): string | undefined {
  try {
    canonicalCIDR(s);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const CIDR_EXPECTED = 'must be a CIDR prefix like 10.0.0.0/24 or 2001:db8::/64';
const cidr = z
  .string()
  .max(64, { error: CIDR_EXPECTED, abort: true })
  .refine(isCIDR, {
    error: (iss) => {
      const why = typeof iss.input === 'string' ? cidrProblem(iss.input) : undefined;
      return why === undefined ? CIDR_EXPECTED : `${CIDR_EXPECTED} (${why})`;
    },
  });

/** True when `parse` accepts `text` (the codec's community parsers throw on anything else). */
export function parses(parse: (text: string) => unknown, text: string): boolean {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A standard community (RFC 1997) as the BGP codec reads it: "ASN:VALUE" or a well-known name. A bare number ("65000")
 * is refused though the codec reads it as a 32-bit value (0:65000): that is never what was meant (issue 35).
 */
const bareNumber = (s: string): boolean => /^\s*\d+\s*$/.test(s);
/** True when `s` is a standard community's text (see {@link community}). */
const isCommunity = (s: string): boolean => !bareNumber(s) && parses(parseCommunity, s);
const community = z.string().refine(isCommunity, {
  error: (iss) =>
    typeof iss.input === 'string' && bareNumber(iss.input)
      ? `must be a community "ASN:VALUE", not a bare number: write e.g. "${iss.input.trim()}:0" or "0:${iss.input.trim()}", whichever is meant`
      : 'must be a community "ASN:VALUE" (0..65535 each) or a well-known name (no-export, no-advertise, nopeer, blackhole, graceful-shutdown, ...)',
});
const largeCommunity = z.string().refine((s) => parses(parseLargeCommunity, s), {
  error: 'must be a large community "GLOBAL:LOCAL1:LOCAL2" (0..4294967295 each)',
});
/** The name of a community alias (`communityAliases`, MetalLB's Community kind): a letter, then letters, digits, `-_.`. */
const ALIAS_NAME = /^[A-Za-z][-A-Za-z0-9_.]{0,62}$/;
/** A community of an advertisement: a value, or the name of a `communityAliases` entry (checked by semanticChecks). */
const communityOrAlias = z.string().refine((s) => isCommunity(s) || ALIAS_NAME.test(s), {
  error: (iss) =>
    typeof iss.input === 'string' && bareNumber(iss.input)
      ? `must be a community "ASN:VALUE", not a bare number: write e.g. "${iss.input.trim()}:0" or "0:${iss.input.trim()}", whichever is meant`
      : 'must be a community "ASN:VALUE" (0..65535 each), a well-known name (no-export, ...) or the name of a communityAliases entry',
});
/** A community alias: its name and the standard or large community it stands for. */
const communityAlias = z
  .strictObject({
    name: z.string().regex(ALIAS_NAME, { error: 'must start with a letter and hold only letters, digits, "-", "_" and "." (at most 63)' }).describe('The alias, used in advertisements\' communities.'),
    value: z
      .string()
      .refine((s) => isCommunity(s) || parses(parseLargeCommunity, s), { error: 'must be a community "ASN:VALUE" or a large community "G:L1:L2"' })
      .describe('The standard community "ASN:VALUE" (or well-known name) or large community "G:L1:L2" it stands for.'),
  })
  .describe("A name for a community value (MetalLB's Community kind).");
const extendedCommunity = z.string().refine((s) => !('error' in parseExtendedCommunityText(s)), {
  error: (iss) => {
    const r = typeof iss.input === 'string' ? parseExtendedCommunityText(iss.input) : { error: 'must be a string' };
    return 'error' in r ? `must be an extended community: ${r.error}` : 'invalid';
  },
});

/**
 * A link bandwidth: bytes per second as a number or digits ("125000000"), or bits with a unit ("1gbps"); at least
 * 1 byte/s and within an IEEE 754 single (what the community carries, RFC 10005).
 */
const bandwidth = z.union([z.number(), z.string()]).superRefine((v, ctx) => {
  let bytes: number;
  try {
    bytes = typeof v === 'number' ? v : parseBandwidthText(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return;
  }
  if (!(bytes >= 1) || !Number.isFinite(Math.fround(bytes))) ctx.addIssue({ code: 'custom', message: `must be at least 1 byte per second and fit an IEEE 754 single (about 3.4e38), got ${JSON.stringify(v)}` });
});

/** metav1.LabelSelector. */
const labelSelector = z
  .strictObject({
    matchLabels: z.record(z.string(), z.string()).optional().describe('Labels that must all be present with these values.'),
    matchExpressions: z
      .array(
        z.strictObject({
          key: z.string().min(1),
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
          values: z.array(z.string()).optional(),
        }),
      )
      .optional()
      .describe('Requirements (In, NotIn, Exists, DoesNotExist) that must all hold.'),
  })
  .describe('A Kubernetes label selector (matchLabels AND matchExpressions); empty matches everything.');

/**
 * A list of label selectors, MetalLB's `nodeSelectors` / `serviceSelectors`: an object matches when ANY selector
 * matches; an absent or empty list matches everything.
 */
const labelSelectors = (what: string) =>
  z
    .array(labelSelector)
    .max(64, msg('must list at most 64 selectors'))
    .describe(`${what} whose labels match ANY of these selectors (absent or empty: all).`);

/** Route families a peer may offer: the BGP layer's `Family` names (RFC 4760 AFI/SAFI unicast). */
const FAMILIES = ['ipv4-unicast', 'ipv6-unicast'] as const satisfies readonly Family[];

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

const passwordSource = z
  .strictObject(
    {
      file: z.string().min(1).optional().describe('Read the password from this file (trailing newline removed).'),
      env: z.string().min(1).optional().describe('Read the password from this environment variable.'),
    },
    {
      // A password written inline by mistake: never echo it (docs/operations.md, "Limits").
      error: (iss) => (iss.code === 'invalid_type' && iss.input !== undefined ? `must be a mapping {file: PATH} or {env: VARIABLE}, got ${typeof iss.input === 'string' ? 'a string' : 'another value'} (not shown: the password is never written inline)` : undefined),
    },
  )
  .superRefine((v, ctx) => {
    if ((v.file === undefined) === (v.env === undefined)) ctx.addIssue({ code: 'custom', message: 'set exactly one of file or env' });
  })
  .describe('TCP MD5 signature password (RFC 2385), never written inline in the file.');

/** A Kubernetes object name (RFC 1123 subdomain, as the apiserver requires of Secrets). */
const objectName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, msg('must be a Kubernetes object name (lower-case letters, digits, "-" and ".", at most 253)'));

/** A TCP MD5 password read from a Secret in Herald's namespace (MetalLB `passwordSecret`). */
const passwordSecret = z
  .strictObject({
    name: objectName.describe("The Secret's name; it lives in Herald's namespace (Herald may get Secrets there only)."),
    key: z.string().min(1).max(253).default('password').describe('The key of the password in the Secret (MetalLB: `password` of a kubernetes.io/basic-auth Secret).'),
  })
  .describe("TCP MD5 signature password (RFC 2385) from a Secret in Herald's namespace, read through the apiserver (needs the kubernetes source).");

/** A BFD interval in milliseconds (bgp/peer-config.ts BFD_OPTIONS). */
const bfdInterval = (o: SubOption) => integerOption(o, (r) => `must be an integer number of milliseconds ${r}`);

/** A peer's BFD settings; names as MetalLB's BFDProfile (intervals in milliseconds), defaults and ranges bgp/'s. */
const bfdSchema = z.strictObject({
  enabled: z.boolean().default(false),
  transmitInterval: bfdInterval(BFD_OPTIONS.transmitIntervalMs).default(BFD_OPTIONS.transmitIntervalMs.default).describe('Milliseconds: the fastest we send once Up (bfd.DesiredMinTxInterval); 1000 until Up.'),
  receiveInterval: bfdInterval(BFD_OPTIONS.receiveIntervalMs).default(BFD_OPTIONS.receiveIntervalMs.default).describe('Milliseconds: the fastest we accept packets (bfd.RequiredMinRxInterval).'),
  detectMultiplier: integerOption(BFD_OPTIONS.detectMultiplier, (r) => `must be an integer ${r}`)
    .default(BFD_OPTIONS.detectMultiplier.default)
    .describe('Packets missed before the session is declared down (bfd.DetectMult).'),
  passive: z.boolean().default(BFD_OPTIONS.passive.default).describe('Wait for the router to send first.'),
  multihop: z.boolean().optional().describe('RFC 5883 multihop (UDP 4784) instead of RFC 5881 single-hop (UDP 3784, TTL 255 required); default: true when ebgpMultihop is 2 or more.'),
  minimumTtl: ttl(BFD_OPTIONS.minimumTtl).optional().describe("Multihop only: drop the router's BFD packets that arrive with a lower TTL (default: no check)."),
});

export const peerSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, msg('must be 1..63 characters of letters, digits, "_", "." or "-", starting with a letter or digit'))
      .describe('Unique name of the peer (used in logs, metrics, the admin API and route filters).'),
    address: ipAddress.describe("The peer's IP address."),
    port: port.default(PEER_OPTIONS.port.default).describe("The peer's TCP port."),
    peerAs: asNumber.describe("The peer's AS number. Equal to the local AS makes an iBGP session."),
    localAs: asNumber.optional().describe("Our AS number on this session (default: the node's, bgp.localAs unless a BGPNodeConfigOverride sets it)."),
    localAddress: ipAddress.optional().describe('Our source address for the session; also the default NEXT_HOP.'),
    holdTime: integerOption(PEER_OPTIONS.holdTimeSec, (r) => `must be ${r} (seconds)`).default(PEER_OPTIONS.holdTimeSec.default).describe('Hold time offered in OPEN, seconds: 0 (no keepalives) or 3..65535 (RFC 4271 §4.2).'),
    keepaliveTime: wholeSeconds(PEER_OPTIONS.keepaliveTimeSec)
      .optional()
      .describe('Seconds between KEEPALIVEs; default one third of the negotiated hold time. Must be below holdTime.'),
    connectRetryTime: wholeSeconds(PEER_OPTIONS.connectRetryTimeSec)
      .default(PEER_OPTIONS.connectRetryTimeSec.default)
      .describe('Base ConnectRetry time, seconds (exponential backoff with jitter, capped).'),
    passive: z.boolean().default(PEER_OPTIONS.passive.default).describe('Never dial; wait for the peer to connect (needs bgp.listen).'),
    password: passwordSource.optional(),
    passwordSecret: passwordSecret.optional(),
    ebgpMultihop: ttl(PEER_OPTIONS.ebgpMultihop)
      .optional()
      .describe('IP TTL of our packets for an eBGP peer several hops away.'),
    ttlSecurity: z.boolean().default(PEER_OPTIONS.ttlSecurity.default).describe('GTSM (RFC 5082): send TTL 255 and require received TTL 255.'),
    families: z
      .array(z.enum(FAMILIES, msg('must be ipv4-unicast or ipv6-unicast')))
      .min(1, msg('must list at least one family'))
      .default([...PEER_OPTIONS.families.default])
      .describe('Address families offered in OPEN (Multiprotocol capability, RFC 4760).'),
    nextHop: ipv4Address.optional().describe('NEXT_HOP for IPv4 routes to this peer (default: the session local address).'),
    nextHopV6: ipv6Address.optional().describe('Next hop for IPv6 routes to this peer; required to send IPv6 routes over an IPv4 session.'),
    gracefulRestart: z
      .strictObject({
        enabled: z.boolean().default(false),
        restartTime: integerOption(GRACEFUL_RESTART_OPTIONS.restartTimeSec, (r) => `must be ${r} (seconds)`)
          .default(GRACEFUL_RESTART_OPTIONS.restartTimeSec.default)
          .describe('Restart Time advertised in the capability, seconds (RFC 4724 §3, 12 bits).'),
      })
      .optional()
      .describe('Graceful Restart capability (RFC 4724).'),
    gracefulShutdown: z
      .strictObject({
        enabled: z.boolean().default(false),
        waitTime: nonNegativeSeconds(3600).default(15).describe('Seconds between re-announcing with GRACEFUL_SHUTDOWN and closing.'),
      })
      .optional()
      .describe('Graceful shutdown (RFC 8326) on a drain and a departure (docs/upgrades.md); enabled on any peer, a departing node drains instead of withdrawing at once.'),
    maxPrefixes: integerOption(PEER_OPTIONS.maxPrefixes, () => 'must be a positive integer').optional().describe('Cease (RFC 4486 subcode 1) when the peer sends more prefixes than this.'),
    bfd: bfdSchema.optional().describe('BFD (RFC 5880): the router notices a dead node in transmitInterval × detectMultiplier instead of the hold time; a BFD failure resets this BGP session. Changing it never resets BGP.'),
    nodeSelector: labelSelector.optional().describe("Peer only from nodes whose labels match (needs the Kubernetes source for the node's labels). The same as nodeSelectors with one selector."),
    nodeSelectors: labelSelectors('Peer only from nodes').optional(),
  })
  .describe('A BGP neighbour.');

const healthCheckKinds = ['tcp', 'http', 'https'] as const;

const routeHealthCheck = z
  .strictObject({
    kind: z.enum(healthCheckKinds).default('tcp').describe('Probe type.'),
    host: ipAddress.optional().describe('Address to probe (default: node.ip).'),
    port: port.describe('Port to probe.'),
    path: z.string().startsWith('/').optional().describe('HTTP path for http/https (default /).'),
    expectedStatus: z.array(z.number().int().min(100).max(599)).optional().describe('Accepted HTTP statuses (default 200..399).'),
    interval: positiveSeconds(MAX_PROBE_SECONDS).optional().describe('Override healthChecks.interval, seconds.'),
    timeout: positiveSeconds(MAX_PROBE_SECONDS).optional().describe('Override healthChecks.timeout, seconds.'),
    rise: probeCount.optional().describe('Override healthChecks.rise.'),
    fall: probeCount.optional().describe('Override healthChecks.fall.'),
  })
  .describe('A check gating a static route: announced only while it passes.');

export const staticRouteSchema = z
  .strictObject({
    prefix: cidr.describe('Prefix to announce, e.g. 192.0.2.10/32.'),
    nextHop: ipAddress.optional().describe("Next hop (default: the peer's nextHop / nextHopV6, else the session local address)."),
    communities: z.array(community).optional().describe('Standard communities (RFC 1997), "ASN:VALUE" or well-known names.'),
    largeCommunities: z.array(largeCommunity).optional().describe('Large communities (RFC 8092), "G:L1:L2".'),
    extendedCommunities: z
      .array(extendedCommunity)
      .optional()
      .describe(
        'Extended communities (RFC 4360, RFC 5701): "rt:65000:100", "ro:192.0.2.1:7", "rt:[2001:db8::1]:100", link bandwidth "lb:65000:1gbps" (transitive; add ":non-transitive" for type 0x40), or "0x" + 16 hex digits.',
      ),
    localPref: uint32('a LOCAL_PREF').optional().describe('LOCAL_PREF, sent to iBGP peers only (RFC 4271 §5.1.5).'),
    med: uint32('a MED').optional().describe('MULTI_EXIT_DISC (RFC 4271 §5.1.4).'),
    peers: z.array(z.string()).optional().describe('Announce only to these peers (default: every peer).'),
    healthCheck: routeHealthCheck.optional(),
  })
  .describe('A statically configured route.');

/** The message of `parse`'s error for `input`, else `fallback`. */
function parseError(parse: (text: string) => unknown, fallback: string): (iss: { input?: unknown }) => string {
  return (iss) => {
    if (typeof iss.input !== 'string') return fallback;
    try {
      parse(iss.input);
      return fallback;
    } catch (err) {
      return (err as Error).message;
    }
  };
}

/**
 * What an advertisement lets Services add with the path-attribute annotations (docs/decisions.md "Path attributes from
 * Services"): nothing unless listed here.
 */
const serviceAttributes = z
  .strictObject({
    communities: z
      .array(z.string().max(64).refine((t) => parses(parseCommunityRange, t), { error: parseError(parseCommunityRange, 'must be a community "ASN:VALUE" or a range "ASN:LO-HI"') }))
      .max(256, msg('must list at most 256 communities and ranges'))
      .optional()
      .describe('Standard communities a Service may add with herald.io/communities: "ASN:VALUE" or a range "ASN:LO-HI" (0..65535 each). Never a well-known one (65535:x: no-export, blackhole, graceful-shutdown, ...): those are set by the operator only.'),
    largeCommunities: z
      .array(z.string().max(64).refine((t) => parses(parseLargeCommunityRange, t), { error: parseError(parseLargeCommunityRange, 'must be a large community "G:L1:L2" or a range "G:L1:LO-HI"') }))
      .max(256, msg('must list at most 256 large communities and ranges'))
      .optional()
      .describe('Large communities a Service may add with herald.io/large-communities: "GLOBAL:LOCAL1:LOCAL2" or a range of the last part "GLOBAL:LOCAL1:LO-HI".'),
    med: z.boolean().optional().describe("true: a Service's herald.io/med replaces this advertisement's MED. Default: refused."),
    maxPrepend: integerIn(0, 10)
      .optional()
      .describe('The most extra copies of the local AS a Service may ask for with herald.io/as-path-prepend. Default 0: refused.'),
  })
  .describe(
    "Which path attributes Services may set through this advertisement with the herald.io/ annotations (docs/traffic-steering.md). Absent: none; a Service's annotations are then refused with the reason AttributeNotAllowed and the VIP is announced with this advertisement's attributes.",
  );

/** A list of CIDRs an operator allows (top level, and on an advertisement where it narrows). */
const allowedPrefixes = z.array(cidr).max(1024, msg('must list at most 1024 CIDRs'));

export const advertisementSchema = z
  .strictObject({
    name: z.string().min(1).describe('Name of the advertisement (shown in reason chains).'),
    addressKinds: z
      .array(z.enum(['loadBalancer', 'externalIP', 'clusterIP', 'serviceCIDR']))
      .min(1)
      .default(['loadBalancer'])
      .describe('Which addresses it announces.'),
    serviceSelector: labelSelector.optional().describe('Services whose labels match (the same as serviceSelectors with one selector).'),
    serviceSelectors: labelSelectors('Services').optional(),
    namespaces: z.array(z.string()).optional().describe('Namespaces of the Services (default all).'),
    nodeSelector: labelSelector.optional().describe('Announce only from nodes whose labels match (the same as nodeSelectors with one selector).'),
    nodeSelectors: labelSelectors('Announce only from nodes').optional(),
    peers: z.array(z.string()).optional().describe('Peers to announce to (default all).'),
    ipAddressPools: z
      .array(z.string().min(1))
      .max(256, msg('must list at most 256 pools'))
      .optional()
      .describe("Announce only addresses inside these pools (by name: the file's pools and IPAddressPool objects), as MetalLB's BGPAdvertisement. With ipAddressPoolSelectors: inside a pool either selects. Absent (both): any address."),
    ipAddressPoolSelectors: labelSelectors('Announce only addresses inside pools')
      .optional()
      .describe("Announce only addresses inside the pools whose labels match ANY of these selectors (a pool's labels; an IPAddressPool object's metadata.labels), as MetalLB's BGPAdvertisement."),
    communities: z
      .array(communityOrAlias)
      .optional()
      .describe('Standard communities (RFC 1997): "ASN:VALUE", a well-known name, or the name of a communityAliases entry (which may stand for a large community).'),
    largeCommunities: z.array(largeCommunity).optional(),
    localPref: uint32('a LOCAL_PREF').optional(),
    med: uint32('a MED').optional(),
    aggregationLength: z.number().int().min(0).max(32).optional().describe('IPv4 prefix length announced for a VIP (default 32).'),
    aggregationLengthV6: z.number().int().min(0).max(128).optional().describe('IPv6 prefix length announced for a VIP (default 128).'),
    weighting: z
      .enum(['endpoints'], msg('must be endpoints'))
      .optional()
      .describe(
        "endpoints: each node attaches the link bandwidth extended community (RFC 10005, transitive) = its ready local endpoints × bandwidthPerEndpoint, so routers doing weighted ECMP send each node a share in proportion to its pods. Applies to VIPs whose traffic policy is Local (docs/traffic-steering.md). Default: no link bandwidth.",
      ),
    bandwidthPerEndpoint: bandwidth
      .optional()
      .describe('With weighting: the link bandwidth of one endpoint, bytes per second (125000000) or bits with a unit ("1gbps", "100mbps"). Only ratios matter; the same on every node. Default "1gbps".'),
    locality: z
      .strictObject({
        preferLocal: z.boolean().default(true).describe('Make the nodes with a ready local endpoint preferred.'),
        med: uint32('a MED').optional().describe("Added to the MED (the advertisement's med, or herald.io/med; 0 when none) on nodes without a ready local endpoint; nodes with one send the MED without it."),
        prependOthers: integerIn(1, 10)
          .optional()
          .describe('Extra copies of the local AS toward eBGP peers on nodes without a ready local endpoint.'),
      })
      .optional()
      .describe(
        'For VIPs whose traffic policy is Cluster (announced from every eligible node): routers prefer the nodes with a ready local endpoint, the others stay as fallback (a higher MED, a longer AS path). Set med, prependOthers or both.',
      ),
    serviceAttributes: serviceAttributes.optional(),
    allowedPrefixes: allowedPrefixes
      .optional()
      .describe(
        'Narrows what this advertisement announces: every prefix it sends (after aggregation, of every address kind) must also lie inside these CIDRs. It can only narrow the top-level allowedPrefixes and pools, never widen them. Default: no narrowing.',
      ),
    maxNodesPerVip: integerIn(1, 10000)
      .optional()
      .describe(
        "Announce each VIP from at most this many eligible nodes, chosen by rendezvous hashing of (VIP, node) from the cluster's Node objects and EndpointSlices, so every node makes the same choice. It can be set in the file or a BGPAdvertisement and changed by a reload (while it is set, each node reads the node set the status writer publishes from every Node, never every Node itself: docs/decisions.md \"Node watch\"). Default: every eligible node.",
      ),
  })
  .describe('Which Service addresses to announce, to whom, with which attributes.');

export const poolSchema = z
  .strictObject({
    name: z.string().min(1).describe('Unique name of the pool (the annotation herald.io/address-pool names it).'),
    addresses: z
      .array(
        z.string().max(128, { error: 'must be a CIDR or a range "A-B" of one family', abort: true }).refine((s) => {
          if (s.includes('-')) {
            const [a, b, ...rest] = s.split('-').map((x) => x.trim());
            return rest.length === 0 && !!a && !!b && ipFamilyOf(a) !== undefined && ipFamilyOf(a) === ipFamilyOf(b);
          }
          return isCIDR(s);
        }, msg('must be a CIDR or a range "A-B" of one family')),
      )
      .min(1)
      .max(1024, msg('must list at most 1024 CIDRs and ranges'))
      .describe('CIDRs and ranges "A-B" (one family each) the pool hands out.'),
    autoAssign: z.boolean().default(true).describe('Assign from this pool to Services that name no pool (false: only to Services that name it).'),
    avoidBuggyIPs: z.boolean().default(false).describe('Skip IPv4 addresses ending in .0 and .255.'),
    namespaces: z.array(z.string()).optional().describe('Only Services in these namespaces (default: all; with namespaceSelectors: in either).'),
    namespaceSelectors: labelSelectors('Only Services in namespaces')
      .optional()
      .describe("Only Services in namespaces whose labels match ANY of these selectors (with namespaces: in either), as MetalLB's serviceAllocation. The allocator then reads the cluster's Namespaces (RBAC: namespaces list/watch)."),
    serviceSelector: labelSelector.optional().describe('Only Services whose labels match (the same as serviceSelectors with one selector).'),
    serviceSelectors: labelSelectors('Only Services').optional(),
    priority: z.number().int().optional().describe('Lower is tried first; pools without a priority come last.'),
    labels: z
      .record(z.string(), z.string())
      .optional()
      .describe("Labels advertisements select this pool by (ipAddressPoolSelectors). An IPAddressPool object's are its metadata.labels."),
  })
  .describe('LoadBalancer IP pool: the elected allocator assigns addresses from it to LoadBalancer Services (docs/ipam.md; needs the kubernetes source).');

const sourceSchema = z
  .strictObject({
    kubernetes: z
      .strictObject({
        kubeconfig: z.string().optional().describe('Kubeconfig path; wins over KUBECONFIG, which wins over in-cluster.'),
        qps: z
          .number()
          .min(0)
          .optional()
          .describe("Requests a second to the apiserver, client side (client-go's QPS): default 5 for `herald run`, 20 for `herald controller`; 0: no limit."),
        burst: z.number().int().min(1).optional().describe("Requests at once beyond `qps` (client-go's Burst): default 10 for `herald run`, 30 for `herald controller`."),
      })
      .optional()
      .describe('Watch Services, EndpointSlices and Nodes in the cluster.'),
    manifests: z.string().min(1).optional().describe('Read Kubernetes objects from YAML files in this directory (tests, demos).'),
  })
  .superRefine((v, ctx) => {
    if ((v.kubernetes === undefined) === (v.manifests === undefined)) ctx.addIssue({ code: 'custom', message: 'set exactly one of kubernetes or manifests' });
  })
  .describe('Where Service/EndpointSlice/Node objects come from. Without it only static routes are announced.');

/** A BGP Identifier (RFC 6286 §2.1: a non-zero 32-bit value, written as a dotted quad). */
const routerId = ipv4Address.refine((s) => s !== '0.0.0.0', { error: 'must not be 0.0.0.0 (the BGP Identifier is non-zero, RFC 6286 §2.1)' });

/**
 * One node's own settings, over the configuration every node shares (the BGPNodeConfigOverride kind, named after
 * its node; docs/decisions.md "Configuration sources").
 */
export const nodeOverrideSchema = z
  .strictObject({
    localAs: asNumber.optional().describe("This node's AS number (default bgp.localAs); a peer's own localAs still wins."),
    routerId: routerId.optional().describe("This node's BGP Identifier (default bgp.routerId, else the node's IPv4 address). A change resets its sessions."),
    sourceAddresses: z
      .array(ipAddress)
      .min(1)
      .max(2, msg('must list at most one address per family'))
      .superRefine((list, ctx) => {
        if (list.length === 2 && ipFamilyOf(list[0] as string) === ipFamilyOf(list[1] as string)) ctx.addIssue({ code: 'custom', path: [1], message: 'must list at most one address per family' });
      })
      .optional()
      .describe("This node's source address of each family for the sessions whose peer sets no sourceAddress (as Cilium's per-node localAddress); also their default NEXT_HOP. At most one per family."),
    peers: z.array(peerSchema).max(64, msg('must list at most 64 peers')).optional().describe('Peers of this node only, besides those selected for it (their node selectors do not apply).'),
  })
  .describe('Settings of one node.');

export const configSchema = z
  .strictObject({
    bgp: z
      .strictObject({
        localAs: asNumber.describe('Our AS number.'),
        routerId: routerId.optional().describe('BGP Identifier, dotted quad (default: node.ip when it is IPv4).'),
        listen: z
          .strictObject({
            address: ipAddress.default('0.0.0.0').describe('Address to accept BGP connections on.'),
            port: port.default(179).describe('TCP port to accept BGP connections on (below 1024 needs root; the DaemonSet examples use 1179: docs/routers.md).'),
          })
          .optional()
          .describe('Accept incoming sessions (needed by passive peers). Absent: dial only.'),
      })
      .describe('Global BGP settings.'),
    peers: z.array(peerSchema).default([]).describe('BGP neighbours.'),
    routes: z.array(staticRouteSchema).default([]).describe('Static routes, announced as configured.'),
    source: sourceSchema.optional(),
    node: z
      .strictObject({
        name: z.string().min(1).optional().describe('This Kubernetes node (default: --node-name, then NODE_NAME).'),
        ip: z
          .string()
          .superRefine((s, ctx) => {
            const r = parseNodeIps(s);
            if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
          })
          .optional()
          .describe(
            "This node's addresses, one per IP family (`10.0.0.5` or `10.0.0.5,fd00::5`; --node-ip, then this, then NODE_IP). They override the Node object's InternalIP of their family, which health checks probe otherwise.",
          ),
      })
      .default({})
      .describe('Identity of the node Herald runs on.'),
    loadBalancerClass: z.string().min(1).optional().describe('Announce only LoadBalancer Services of this class (default: class-less Services).'),
    serviceCIDRs: z.array(cidr).optional().describe('Service CIDRs announced by advertisements selecting serviceCIDR (an aggregated ClusterIP prefix may reach inside them).'),
    allowedPrefixes: allowedPrefixes
      .optional()
      .describe(
        "Where LoadBalancer ingress addresses and externalIPs may be announced, besides the pools' addresses: tenants choose those addresses, the operator bounds them. An address outside every pool and these CIDRs is never announced (reason PrefixNotAllowed), and the prefix announced after an advertisement's aggregationLength must lie inside them too. With neither pools nor allowedPrefixes no LoadBalancer or external address is announced. ClusterIPs need no list (docs/security.md).",
      ),
    countServingTerminating: z.boolean().default(false).describe('Count serving-but-terminating endpoints as usable.'),
    attributeChangeInterval: nonNegativeSeconds(3600)
      .default(5)
      .describe(
        "Seconds: an announced Service route changes its attributes (link bandwidth, MED, AS path, communities) at most once per interval on this node; the latest value goes out when the interval ends. First announcements and withdrawals are never delayed. 0 sends every change at once.",
      ),
    advertisements: z.array(advertisementSchema).optional().describe('Default (absent or empty): LoadBalancer ingress IPs to every peer.'),
    healthChecks: z
      .strictObject({
        interval: positiveSeconds(MAX_PROBE_SECONDS).default(5).describe('Seconds between probes.'),
        timeout: positiveSeconds(MAX_PROBE_SECONDS).default(2).describe('Deadline of one probe, seconds.'),
        rise: probeCount.default(2).describe('Consecutive successes before a VIP is announced.'),
        fall: probeCount.default(3).describe('Consecutive failures before an announced VIP is withdrawn.'),
      })
      .default({ interval: 5, timeout: 2, rise: 2, fall: 3 })
      .describe('Defaults for every health check.'),
    kubeProxy: z
      .strictObject({
        enabled: z
          .boolean()
          .optional()
          .describe(
            'Probe kube-proxy at all (node /healthz and, with checkServices, the healthCheckNodePort of Local Services). Default: on with the kubernetes source, off with the manifests source (a plain Linux host runs no kube-proxy; set true when one does, as in the demo).',
          ),
        healthzPort: port.default(10256).describe("kube-proxy's node health port (GET /healthz)."),
        checkServices: z.boolean().default(true).describe("Probe kube-proxy's per-Service health port (healthCheckNodePort) for externalTrafficPolicy Local."),
      })
      .default({ healthzPort: 10256, checkServices: true }),
    flapControl: z
      .strictObject({
        holdDown: nonNegativeSeconds().default(10).describe('Minimum seconds between a withdrawal and the next announcement (0 disables).'),
        penalty: z.number().min(0).default(1000).describe('Penalty per withdrawal (0 disables damping).'),
        suppressThreshold: z.number().positive().default(2000).describe('Suppress when the penalty reaches this.'),
        reuseThreshold: z.number().positive().default(750).describe('Usable again once the penalty decays to this.'),
        halfLife: positiveSeconds().default(60).describe('Penalty half-life, seconds.'),
        maxSuppress: positiveSeconds().default(300).describe('Longest suppression after the last withdrawal, seconds.'),
      })
      .default({ holdDown: 10, penalty: 1000, suppressThreshold: 2000, reuseThreshold: 750, halfLife: 60, maxSuppress: 300 })
      .describe('Hold-down and damping of health-check flaps.'),
    pools: z.array(poolSchema).optional(),
    communityAliases: z
      .array(communityAlias)
      .max(1024, msg('must list at most 1024 aliases'))
      .optional()
      .describe("Names for community values, usable in every advertisement's communities (the file's and BGPAdvertisement objects'), as MetalLB's Community kind."),
    ignoreExcludeLB: z
      .boolean()
      .default(false)
      .describe(
        "true: the label node.kubernetes.io/exclude-from-external-load-balancers neither excludes a node nor makes it depart (MetalLB's --ignore-exclude-lb: kubeadm puts it on control-plane nodes, which then announce too). Default false: it excludes the node.",
      ),
    compatibility: z
      .strictObject({
        metallbAnnotations: z
          .boolean()
          .default(false)
          .describe(
            "true: the allocator also honours MetalLB's Service annotations metallb.io/loadBalancerIPs, metallb.io/address-pool and metallb.io/allow-shared-ip (and their deprecated metallb.universe.tf/ names), under the same pool restrictions as the herald.io/ ones (docs/ipam.md); a Service with both that disagree is refused. For a drop-in move from MetalLB (docs/metallb-migration.md).",
          ),
      })
      .default({ metallbAnnotations: false })
      .describe('What Herald reads of other implementations (docs/metallb-migration.md).'),
    admin: z
      .strictObject({
        address: ipAddress.default('127.0.0.1').describe('Address of the admin HTTP API and /metrics.'),
        port: z.number().int().min(0).max(65535).default(9179).describe('Port of the admin HTTP API (0 = any free port).'),
        tokenFile: z.string().min(1).optional().describe('File holding the bearer token for mutating endpoints (else HERALD_ADMIN_TOKEN).'),
      })
      .default({ address: '127.0.0.1', port: 9179 })
      .describe('Admin HTTP API.'),
    shutdown: z
      .strictObject({
        onTerm: z
          .enum(['auto', 'restart', 'departure'], msg('must be auto, restart or departure'))
          .default('auto')
          .describe(
            'What SIGTERM is (docs/upgrades.md): auto = a departure when the node is drained or leaving service (Kubernetes: deletion, autoscaler or out-of-service taint, Ready False/Unknown, exclude label), else a restart (rolling update, pod deletion); restart = always keep the routers\' forwarding state (graceful restart); departure = always move traffic away first (RFC 8326, then Cease).',
          ),
      })
      .default({ onTerm: 'auto' })
      .describe('Stop modes (docs/decisions.md "Stop modes").'),
    metrics: z
      .strictObject({
        address: ipAddress
          .optional()
          .describe("Address of the metrics-only listener. Default: the node's address (node.ip, --node-ip or NODE_IP; the DaemonSet passes the node's address as --node-ip)."),
        port: z.number().int().min(0).max(65535).default(9179).describe('Port of the metrics-only listener (0 = any free port). The same port as admin.port is fine on another address.'),
      })
      .optional()
      .describe('Metrics-only HTTP listener for Prometheus: GET /metrics and nothing else, no token (docs/metrics.md). Absent: none; the admin API still serves /metrics on its own address.'),
    stateDir: z
      .string()
      .min(1)
      .default('/var/lib/herald')
      .describe('Directory for state kept across restarts: the graceful-restart heartbeat and, in standalone mode only, the drain record (drain.json; with the Kubernetes source a drain is the Node annotation herald.io/drain).'),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info').describe('Log level.'),
  })
  .describe('Herald configuration file (YAML).');

/** The validated configuration, defaults applied. */
export type Config = z.output<typeof configSchema>;
/** What a user may write (defaults optional). */
export type ConfigInput = z.input<typeof configSchema>;
export type PeerConfig = Config['peers'][number];
export type StaticRouteConfig = Config['routes'][number];
export type AdvertisementConfig = NonNullable<Config['advertisements']>[number];
export type PoolConfig = NonNullable<Config['pools']>[number];
/** One node's own settings (the BGPNodeConfigOverride kind). */
export type NodeOverrideConfig = z.output<typeof nodeOverrideSchema>;

/** One problem found in a configuration: `path` like `peers[1].holdTime` ('' for the root). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Format a zod-style path: ['peers', 1, 'holdTime'] → "peers[1].holdTime". */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/**
 * An advertisement's `communities` with the `communityAliases` they name replaced by their values: standard ones stay
 * in `communities`, an alias of a large community moves to `largeCommunities` (after the advertisement's own).
 * `unknown` lists the names no alias defines (semanticChecks refuses those).
 */
export function resolveCommunityAliases(
  a: { readonly communities?: readonly string[] | undefined; readonly largeCommunities?: readonly string[] | undefined },
  aliases: readonly { readonly name: string; readonly value: string }[] | undefined,
): { communities: string[] | undefined; largeCommunities: string[] | undefined; unknown: string[] } {
  if (a.communities === undefined) return { communities: undefined, largeCommunities: a.largeCommunities?.slice(), unknown: [] };
  const byName = new Map((aliases ?? []).map((x) => [x.name, x.value]));
  const communities: string[] = [];
  const large: string[] = [...(a.largeCommunities ?? [])];
  const unknown: string[] = [];
  for (const c of a.communities) {
    if (isCommunity(c)) communities.push(c);
    else {
      const v = byName.get(c);
      if (v === undefined) unknown.push(c);
      else if (isCommunity(v)) communities.push(v);
      else large.push(v);
    }
  }
  return { communities, largeCommunities: large.length > 0 ? large : a.largeCommunities?.slice(), unknown };
}

/**
 * Octets of community values one route may carry so that it fits one 4096-octet UPDATE with its other attributes:
 * the speaker's own limit (bgp/rib/route.ts), which refuses a route above it.
 */
export { MAX_COMMUNITY_OCTETS };

/** An HTTP listener's address and port (0 = any free port). */
export interface ListenerAddress {
  address: string;
  port: number;
}

/**
 * Why the metrics listener cannot bind beside the admin API, or undefined when both can: on one port, equal
 * addresses clash, and so does an unspecified address (`0.0.0.0` with any IPv4 address, `::`, which Node opens
 * dual-stack, with any address). Port 0 never clashes (each gets a free port).
 */
export function listenerClash(admin: ListenerAddress, metrics: ListenerAddress): string | undefined {
  if (admin.port === 0 || metrics.port !== admin.port) return undefined;
  const a = addressValue(admin.address);
  const m = addressValue(metrics.address);
  if (!a || !m) return undefined;
  const unspecified = (x: { family: string; value: bigint }, other: { family: string }) => x.value === 0n && (x.family === 'IPv6' || other.family === 'IPv4');
  const clash = (a.family === m.family && a.value === m.value) || unspecified(a, m) || unspecified(m, a);
  if (!clash) return undefined;
  return `${metrics.address}:${metrics.port} overlaps the admin API on ${admin.address}:${admin.port}: use another metrics.port, or a specific address (the node's, the default) beside an admin API on 127.0.0.1`;
}
