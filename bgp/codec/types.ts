/**
 * The in-memory shapes of BGP messages, capabilities and path attributes: plain readonly objects in discriminated
 * unions (discriminant `type`). No wire lengths are stored; encoders compute them. Field names follow RFC 4271.
 *
 * Addresses and prefixes are canonical strings: "192.0.2.1", "2001:db8::1", "10.0.0.0/24", "2001:db8::/32"
 * (host bits beyond the prefix length are zeroed by the decoder; IPv6 in RFC 5952 form, as Node's net module prints it).
 * AS numbers and 32-bit values are non-negative JavaScript numbers (0..4294967295).
 */
import { MessageType } from '../constants.ts';
import type { AsPathSegmentType, Family, Origin } from '../constants.ts';

/**
 * Negotiated session options that change how bytes are read and written (GoBGP's MarshallingOption,
 * BIRD's bgp_parse_state). Always passed explicitly; never global.
 */
export interface CodecContext {
  /** Both sides sent the 4-octet AS capability: AS_PATH/AGGREGATOR carry 4-octet ASes (RFC 6793 §4.1). */
  readonly fourOctetAs: boolean;
  /** Both sides sent the extended message capability: messages up to 65535 octets (RFC 8654). */
  readonly extendedMessage: boolean;
  /** Families whose NLRI carry a 4-octet Path Identifier in this direction (RFC 7911 §3). */
  readonly addPath: { readonly ipv4?: boolean; readonly ipv6?: boolean };
}

/** The context of a fresh connection before OPENs are exchanged: 2-octet AS, 4096 octets, no ADD-PATH. */
export const DEFAULT_CONTEXT: CodecContext = Object.freeze({ fourOctetAs: false, extendedMessage: false, addPath: Object.freeze({}) });

/** One NLRI entry: a canonical prefix string and, with ADD-PATH, its Path Identifier (RFC 7911 §3). */
export interface NlriEntry {
  readonly prefix: string;
  readonly pathId?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Capabilities (RFC 5492). Unknown capabilities keep their raw value.

/** An address family: AFI (2 octets, IANA; 1 IPv4, 2 IPv6) and SAFI (1 octet; 1 unicast), RFC 4760 §3. */
export interface AfiSafi {
  readonly afi: number;
  readonly safi: number;
}

/** One capability of an OPEN (RFC 5492 §4), discriminated by `type`. */
export type Capability =
  /** RFC 4760 §8: one per supported AFI/SAFI. */
  | { readonly type: 'Multiprotocol'; readonly afi: number; readonly safi: number }
  /** RFC 2918 (code 2). */
  | { readonly type: 'RouteRefresh' }
  /** Pre-standard Cisco route refresh (code 128), kept so it re-encodes. */
  | { readonly type: 'RouteRefreshCisco' }
  /** RFC 7313 (code 70). */
  | { readonly type: 'EnhancedRouteRefresh' }
  /** RFC 8654 (code 6). */
  | { readonly type: 'ExtendedMessage' }
  /** RFC 6793 §3 (code 65): the speaker's real AS. */
  | { readonly type: 'FourOctetAs'; readonly asNumber: number }
  /**
   * RFC 4724 §3 (code 64). `restartTimeSec` 0..4095; `restarting` is the R bit, `notification` the N bit (RFC 8538);
   * each family's `forwardingPreserved` is its F bit. Reserved flag bits are ignored (RFC 4724 §3); when a received
   * value had any set, `raw` keeps the exact value and the encoder writes it back unchanged.
   */
  | {
      readonly type: 'GracefulRestart';
      readonly restarting: boolean;
      readonly notification: boolean;
      readonly restartTimeSec: number;
      readonly families: readonly (AfiSafi & { readonly forwardingPreserved: boolean })[];
      readonly raw?: Buffer;
    }
  /** RFC 7911 §4 (code 69): per family, 1 = receive, 2 = send, 3 = both. */
  | { readonly type: 'AddPath'; readonly families: readonly (AfiSafi & { readonly sendReceive: 1 | 2 | 3 })[] }
  /** draft-walton-bgp-hostname-capability (code 73): hostname and domain name, UTF-8. */
  | { readonly type: 'Fqdn'; readonly hostname: string; readonly domainName: string }
  /** Any other capability, preserved byte for byte. */
  | { readonly type: 'Unknown'; readonly code: number; readonly value: Buffer };

// ---------------------------------------------------------------------------------------------------------------
// Path attributes (RFC 4271 §4.3, §5). Every attribute keeps its received flags octet so that encode(decode(b)) == b;
// builders fill the RFC default flags. The Extended Length bit is honoured on encode (and forced when needed).

/** One AS_PATH / AS4_PATH segment (RFC 4271 §4.3): its type and ASes (0..4294967295), never empty on the wire. */
export interface AsPathSegment {
  readonly type: AsPathSegmentType;
  readonly asns: readonly number[];
}

/**
 * An RFC 4360 extended community: 8 octets kept raw, with the type and subtype octets for convenience (the subtype
 * is the second octet whatever the type; RFC 4360 §2 "regular" types have none). Typed views and builders:
 * ext-communities.ts.
 */
export interface ExtendedCommunity {
  readonly type: number;
  readonly subtype: number;
  /** All 8 octets, including type and subtype. */
  readonly value: Buffer;
}

/**
 * An RFC 5701 IPv6 Address Specific extended community: 20 octets kept raw (type 0x00 transitive or 0x40
 * non-transitive, subtype, 16-octet IPv6 Global Administrator, 2-octet Local Administrator), with the type and
 * subtype octets for convenience.
 */
export interface Ipv6ExtendedCommunity {
  readonly type: number;
  readonly subtype: number;
  /** All 20 octets, including type and subtype. */
  readonly value: Buffer;
}

/** An RFC 8092 large community: global administrator, local data part 1, local data part 2. */
export type LargeCommunity = readonly [number, number, number];

interface AttrBase {
  readonly flags: number;
}

/** One path attribute (RFC 4271 §4.3, §5 and extensions), discriminated by `type`; `flags` is the flags octet. */
export type PathAttribute =
  | (AttrBase & { readonly type: 'ORIGIN'; readonly origin: Origin })
  | (AttrBase & { readonly type: 'AS_PATH'; readonly segments: readonly AsPathSegment[] })
  | (AttrBase & { readonly type: 'NEXT_HOP'; readonly nextHop: string })
  | (AttrBase & { readonly type: 'MULTI_EXIT_DISC'; readonly med: number })
  | (AttrBase & { readonly type: 'LOCAL_PREF'; readonly localPref: number })
  | (AttrBase & { readonly type: 'ATOMIC_AGGREGATE' })
  | (AttrBase & { readonly type: 'AGGREGATOR'; readonly asNumber: number; readonly address: string })
  /** RFC 1997: each community a 32-bit value (high 16 bits AS, low 16 bits value). */
  | (AttrBase & { readonly type: 'COMMUNITIES'; readonly communities: readonly number[] })
  | (AttrBase & { readonly type: 'ORIGINATOR_ID'; readonly originatorId: string })
  | (AttrBase & { readonly type: 'CLUSTER_LIST'; readonly clusterIds: readonly string[] })
  /**
   * RFC 4760 §3. For IPv4/IPv6 unicast the next hop(s) and NLRI are decoded: `nextHops` holds one address, or two
   * for a 32-octet IPv6 next hop (global, link-local; RFC 2545 §3). Other AFI/SAFI keep `raw` (the whole value).
   */
  | (AttrBase & {
      readonly type: 'MP_REACH_NLRI';
      readonly afi: number;
      readonly safi: number;
      readonly nextHops: readonly string[];
      readonly nlri: readonly NlriEntry[];
      readonly raw?: Buffer;
      /**
       * Only in MRT TABLE_DUMP_V2 RIB entries: the value was the RFC 6396 §4.3.4 abbreviated form (next-hop length and
       * next hop only; AFI/SAFI inferred, no NLRI). The encoder writes the same form back.
       */
      readonly mrtAbbreviated?: boolean;
    })
  /** RFC 4760 §4. An empty `withdrawnRoutes` for a family is its End-of-RIB marker (RFC 4724 §2). */
  | (AttrBase & {
      readonly type: 'MP_UNREACH_NLRI';
      readonly afi: number;
      readonly safi: number;
      readonly withdrawnRoutes: readonly NlriEntry[];
      readonly raw?: Buffer;
    })
  | (AttrBase & { readonly type: 'EXTENDED_COMMUNITIES'; readonly extendedCommunities: readonly ExtendedCommunity[] })
  /** RFC 6793 §3: always 4-octet ASes. */
  | (AttrBase & { readonly type: 'AS4_PATH'; readonly segments: readonly AsPathSegment[] })
  | (AttrBase & { readonly type: 'AS4_AGGREGATOR'; readonly asNumber: number; readonly address: string })
  /** RFC 5701 (type code 25), optional transitive: 20-octet communities. */
  | (AttrBase & { readonly type: 'IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY'; readonly ipv6ExtendedCommunities: readonly Ipv6ExtendedCommunity[] })
  | (AttrBase & { readonly type: 'LARGE_COMMUNITY'; readonly largeCommunities: readonly LargeCommunity[] })
  /** Any other attribute, preserved with its flags and value. */
  | (AttrBase & { readonly type: 'UNKNOWN'; readonly typeCode: number; readonly value: Buffer });

/** The `type` names of PathAttribute (RFC attribute names, plus 'UNKNOWN'). */
export type PathAttributeType = PathAttribute['type'];

// ---------------------------------------------------------------------------------------------------------------
// Messages (RFC 4271 §4).

/** RFC 4271 §4.2, RFC 5492, RFC 9072. `holdTime` in seconds; `bgpIdentifier` as a dotted quad. */
export interface OpenMessage {
  readonly type: 'OPEN';
  readonly version: number;
  /** The 2-octet My Autonomous System field (AS_TRANS when the real AS needs 4 octets; see FourOctetAs). */
  readonly myAutonomousSystem: number;
  readonly holdTime: number;
  readonly bgpIdentifier: string;
  /** Capabilities in wire order, flattened across Capabilities optional parameters. */
  readonly capabilities: readonly Capability[];
  /** Optional parameters other than Capabilities (type 2), kept raw. Usually empty. */
  readonly otherParameters?: readonly { readonly paramType: number; readonly value: Buffer }[];
  /**
   * How capabilities were grouped on the wire, for exact re-encoding: 'single' = one Capabilities parameter holding all
   * of them; 'perCapability' = one parameter per capability (as Cisco and Quagga send). Default 'single'.
   */
  readonly parameterLayout?: 'single' | 'perCapability';
  /**
   * Any other grouping seen on the wire (rare): the number of capabilities in each Capabilities parameter, in order
   * (e.g. [3, 1, 0]); when set it wins over `parameterLayout`. Decoders set it only when neither layout fits.
   */
  readonly capabilityGroups?: readonly number[];
  /** The RFC 9072 extended optional parameters length form was used (encoder uses it when needed or when set). */
  readonly extendedOptionalParameters?: boolean;
}

/** RFC 4271 §4.3: IPv4 withdrawn routes and NLRI in the body; other families inside MP_REACH/MP_UNREACH. */
export interface UpdateMessage {
  readonly type: 'UPDATE';
  readonly withdrawnRoutes: readonly NlriEntry[];
  readonly pathAttributes: readonly PathAttribute[];
  readonly nlri: readonly NlriEntry[];
}

/** RFC 4271 §4.5. For Cease 2 and 4, `shutdownCommunication` holds the RFC 9003 text when the data parses as one. */
export interface NotificationMessage {
  readonly type: 'NOTIFICATION';
  readonly errorCode: number;
  readonly errorSubcode: number;
  readonly data: Buffer;
  readonly shutdownCommunication?: string;
}

/** RFC 4271 §4.4: header only. */
export interface KeepaliveMessage {
  readonly type: 'KEEPALIVE';
}

/** RFC 2918 §3, RFC 7313 §3.2 (subtype: 0 normal, 1 BoRR, 2 EoRR, the octet formerly Reserved). */
export interface RouteRefreshMessage {
  readonly type: 'ROUTE-REFRESH';
  readonly afi: number;
  readonly subtype: number;
  readonly safi: number;
  /** Anything after the 4-octet body (e.g. RFC 5291 ORF entries), kept raw. */
  readonly extra?: Buffer;
}

/** Any BGP message, discriminated by `type` (RFC 4271 §4.1 type names). */
export type BgpMessage = OpenMessage | UpdateMessage | NotificationMessage | KeepaliveMessage | RouteRefreshMessage;

/** Maps our message `type` strings to wire type codes (the codes from MessageType, RFC 4271 §4.1, RFC 2918 §3). */
export const MESSAGE_TYPE_CODE: Readonly<Record<BgpMessage['type'], MessageType>> = {
  OPEN: MessageType.Open,
  UPDATE: MessageType.Update,
  NOTIFICATION: MessageType.Notification,
  KEEPALIVE: MessageType.Keepalive,
  'ROUTE-REFRESH': MessageType.RouteRefresh,
};

/** Result of decoding an UPDATE with RFC 7606 error handling: session-fatal problems are thrown as BgpError instead. */
export interface UpdateDecodeResult {
  readonly message: UpdateMessage;
  /** RFC 7606 §2 treat-as-withdraw: the NLRI must be treated as withdrawn. */
  readonly treatAsWithdraw: boolean;
  /** RFC 7606 §2 attribute-discard: attributes dropped from `message`. */
  readonly discardedAttributes: readonly number[];
  /** Human-readable reasons for every non-fatal problem found. */
  readonly problems: readonly string[];
}

/** The Family of an AFI/SAFI pair (RFC 4760 §3): 1/1 → 'ipv4-unicast', 2/1 → 'ipv6-unicast', anything else undefined. */
export function familyOf(afi: number, safi: number): Family | undefined {
  if (safi !== 1) return undefined;
  return afi === 1 ? 'ipv4-unicast' : afi === 2 ? 'ipv6-unicast' : undefined;
}
