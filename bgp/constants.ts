/**
 * Wire constants of BGP-4 and its extensions, as `as const` objects with derived union types and name tables.
 *
 * Sources: RFC 4271 (BGP-4), RFC 4760 (multiprotocol), RFC 5492 (capabilities), RFC 6793 (4-octet AS),
 * RFC 4724 (graceful restart), RFC 7911 (ADD-PATH), RFC 8654 (extended message), RFC 2918 / RFC 7313 (route refresh),
 * RFC 4486 / RFC 9003 (Cease subcodes and shutdown communication), RFC 6608 (FSM error subcodes),
 * RFC 7606 (revised error handling), RFC 1997 / RFC 8092 / RFC 4360 / RFC 5701 (communities), IANA BGP parameters registry.
 */

/** Length of the common message header in octets (RFC 4271 §4.1). */
export const HEADER_LENGTH = 19;
/** Largest message without the extended message capability (RFC 4271 §4.1). */
export const MAX_MESSAGE_LENGTH = 4096;
/** Largest message with the extended message capability (RFC 8654 §4). */
export const MAX_EXTENDED_MESSAGE_LENGTH = 65535;
/** The 16-octet all-ones marker (RFC 4271 §4.1). */
export const MARKER = Buffer.alloc(16, 0xff);
/** BGP version spoken (RFC 4271 §4.2). */
export const BGP_VERSION = 4;
/** The reserved 2-octet AS number used in place of a 4-octet AS toward old speakers (RFC 6793 §9). */
export const AS_TRANS = 23456;
/** The well-known TCP port of BGP (RFC 4271 §8.2.1). */
export const BGP_PORT = 179;

/** Message type codes (RFC 4271 §4.1, RFC 2918 §3). */
export const MessageType = {
  Open: 1,
  Update: 2,
  Notification: 3,
  Keepalive: 4,
  RouteRefresh: 5,
} as const;
/** A message type code, 1..5. */
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

/** NOTIFICATION error codes (RFC 4271 §4.5, RFC 7313 §5). */
export const ErrorCode = {
  MessageHeaderError: 1,
  OpenMessageError: 2,
  UpdateMessageError: 3,
  HoldTimerExpired: 4,
  FsmError: 5,
  Cease: 6,
  RouteRefreshMessageError: 7,
} as const;
/** A NOTIFICATION error code, 1..7. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Message Header Error subcodes (RFC 4271 §6.1). */
export const HeaderSubcode = {
  ConnectionNotSynchronized: 1,
  BadMessageLength: 2,
  BadMessageType: 3,
} as const;

/** OPEN Message Error subcodes (RFC 4271 §6.2, RFC 5492 §5). Subcode 5 is deprecated. */
export const OpenSubcode = {
  Unspecific: 0,
  UnsupportedVersionNumber: 1,
  BadPeerAs: 2,
  BadBgpIdentifier: 3,
  UnsupportedOptionalParameter: 4,
  UnacceptableHoldTime: 6,
  UnsupportedCapability: 7,
  RoleMismatch: 11,
} as const;

/** UPDATE Message Error subcodes (RFC 4271 §6.3). Subcodes 7 and 2-for-routing-loop are deprecated. */
export const UpdateSubcode = {
  Unspecific: 0,
  MalformedAttributeList: 1,
  UnrecognizedWellKnownAttribute: 2,
  MissingWellKnownAttribute: 3,
  AttributeFlagsError: 4,
  AttributeLengthError: 5,
  InvalidOriginAttribute: 6,
  InvalidNextHopAttribute: 8,
  OptionalAttributeError: 9,
  InvalidNetworkField: 10,
  MalformedAsPath: 11,
} as const;

/** Finite State Machine Error subcodes (RFC 6608 §3). */
export const FsmSubcode = {
  UnspecifiedError: 0,
  UnexpectedMessageInOpenSent: 1,
  UnexpectedMessageInOpenConfirm: 2,
  UnexpectedMessageInEstablished: 3,
} as const;

/** Cease subcodes (RFC 4486 §4, RFC 8538 §5). */
export const CeaseSubcode = {
  MaximumNumberOfPrefixesReached: 1,
  AdministrativeShutdown: 2,
  PeerDeconfigured: 3,
  AdministrativeReset: 4,
  ConnectionRejected: 5,
  OtherConfigurationChange: 6,
  ConnectionCollisionResolution: 7,
  OutOfResources: 8,
  HardReset: 9,
  BfdDown: 10,
} as const;

/** ROUTE-REFRESH Message Error subcodes (RFC 7313 §5). */
export const RouteRefreshSubcode = {
  InvalidMessageLength: 1,
} as const;

/** Human names of error codes and subcodes, for logs and the admin API (IANA registry spelling). */
export const ERROR_NAMES: Readonly<Record<number, { name: string; subcodes: Readonly<Record<number, string>> }>> = {
  1: {
    name: 'Message Header Error',
    subcodes: { 1: 'Connection Not Synchronized', 2: 'Bad Message Length', 3: 'Bad Message Type' },
  },
  2: {
    name: 'OPEN Message Error',
    subcodes: {
      0: 'Unspecific',
      1: 'Unsupported Version Number',
      2: 'Bad Peer AS',
      3: 'Bad BGP Identifier',
      4: 'Unsupported Optional Parameter',
      6: 'Unacceptable Hold Time',
      7: 'Unsupported Capability',
      11: 'Role Mismatch',
    },
  },
  3: {
    name: 'UPDATE Message Error',
    subcodes: {
      0: 'Unspecific',
      1: 'Malformed Attribute List',
      2: 'Unrecognized Well-known Attribute',
      3: 'Missing Well-known Attribute',
      4: 'Attribute Flags Error',
      5: 'Attribute Length Error',
      6: 'Invalid ORIGIN Attribute',
      8: 'Invalid NEXT_HOP Attribute',
      9: 'Optional Attribute Error',
      10: 'Invalid Network Field',
      11: 'Malformed AS_PATH',
    },
  },
  4: { name: 'Hold Timer Expired', subcodes: { 0: 'Unspecific' } },
  5: {
    name: 'Finite State Machine Error',
    subcodes: {
      0: 'Unspecified Error',
      1: 'Receive Unexpected Message in OpenSent State',
      2: 'Receive Unexpected Message in OpenConfirm State',
      3: 'Receive Unexpected Message in Established State',
    },
  },
  6: {
    name: 'Cease',
    subcodes: {
      1: 'Maximum Number of Prefixes Reached',
      2: 'Administrative Shutdown',
      3: 'Peer De-configured',
      4: 'Administrative Reset',
      5: 'Connection Rejected',
      6: 'Other Configuration Change',
      7: 'Connection Collision Resolution',
      8: 'Out of Resources',
      9: 'Hard Reset',
      10: 'BFD Down',
    },
  },
  7: { name: 'ROUTE-REFRESH Message Error', subcodes: { 1: 'Invalid Message Length' } },
};

/** Path attribute type codes (RFC 4271 §5, IANA "BGP Path Attributes"). */
export const AttrTypeCode = {
  ORIGIN: 1,
  AS_PATH: 2,
  NEXT_HOP: 3,
  MULTI_EXIT_DISC: 4,
  LOCAL_PREF: 5,
  ATOMIC_AGGREGATE: 6,
  AGGREGATOR: 7,
  COMMUNITIES: 8,
  ORIGINATOR_ID: 9,
  CLUSTER_LIST: 10,
  MP_REACH_NLRI: 14,
  MP_UNREACH_NLRI: 15,
  EXTENDED_COMMUNITIES: 16,
  AS4_PATH: 17,
  AS4_AGGREGATOR: 18,
  IPV6_ADDRESS_SPECIFIC_EXTENDED_COMMUNITY: 25,
  LARGE_COMMUNITY: 32,
} as const;
/** The type code of a path attribute Herald decodes. */
export type AttrTypeCode = (typeof AttrTypeCode)[keyof typeof AttrTypeCode];

/** Path attribute flag bits (RFC 4271 §4.3). */
export const AttrFlag = {
  Optional: 0x80,
  Transitive: 0x40,
  Partial: 0x20,
  ExtendedLength: 0x10,
} as const;

/** ORIGIN values (RFC 4271 §5.1.1). */
export const Origin = { IGP: 0, EGP: 1, INCOMPLETE: 2 } as const;
/** An ORIGIN value: 0 IGP, 1 EGP, 2 INCOMPLETE. */
export type Origin = (typeof Origin)[keyof typeof Origin];

/** AS_PATH segment types (RFC 4271 §4.3, RFC 5065 §3 for confederations). */
export const AsPathSegmentType = {
  AS_SET: 1,
  AS_SEQUENCE: 2,
  AS_CONFED_SEQUENCE: 3,
  AS_CONFED_SET: 4,
} as const;
/** An AS_PATH segment type, 1..4. */
export type AsPathSegmentType = (typeof AsPathSegmentType)[keyof typeof AsPathSegmentType];

/** Address Family Identifiers (IANA; RFC 4760 §3). */
export const Afi = { IPv4: 1, IPv6: 2 } as const;
/** Subsequent Address Family Identifiers (IANA; RFC 4760 §6). */
export const Safi = { Unicast: 1, Multicast: 2 } as const;

/** The two address families Herald speaks; other AFI/SAFI pairs are carried as raw bytes. */
export type Family = 'ipv4-unicast' | 'ipv6-unicast';

/** Capability codes (IANA "Capability Codes"; RFC 5492). */
export const CapabilityCode = {
  Multiprotocol: 1,
  RouteRefresh: 2,
  ExtendedNextHop: 5,
  ExtendedMessage: 6,
  Role: 9,
  GracefulRestart: 64,
  FourOctetAs: 65,
  AddPath: 69,
  EnhancedRouteRefresh: 70,
  LongLivedGracefulRestart: 71,
  Fqdn: 73,
  RouteRefreshCisco: 128,
} as const;

/** OPEN optional parameter types (RFC 5492 §4; type 1 Authentication is deprecated, RFC 9072 extended type 255). */
export const OptionalParameterType = {
  Capabilities: 2,
  ExtendedLength: 255,
} as const;

/** ROUTE-REFRESH message subtypes (RFC 7313 §3.2). */
export const RouteRefreshSubtype = {
  Normal: 0,
  BeginningOfRouteRefresh: 1,
  EndOfRouteRefresh: 2,
} as const;

/** Well-known communities (RFC 1997 §3, RFC 8326 §5 GRACEFUL_SHUTDOWN, RFC 7611 ACCEPT_OWN, RFC 7999 BLACKHOLE, RFC 3765 NOPEER). */
export const WellKnownCommunity = {
  GRACEFUL_SHUTDOWN: 0xffff0000,
  ACCEPT_OWN: 0xffff0001,
  BLACKHOLE: 0xffff029a,
  NO_EXPORT: 0xffffff01,
  NO_ADVERTISE: 0xffffff02,
  NO_EXPORT_SUBCONFED: 0xffffff03,
  NOPEER: 0xffffff04,
} as const;

/** Maximum length of a shutdown communication in octets (RFC 9003 §2). */
export const MAX_SHUTDOWN_COMMUNICATION_LENGTH = 255;
