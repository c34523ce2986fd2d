/**
 * The one protocol error type of Herald's BGP library.
 *
 * A `BgpError` is a session-fatal protocol error that becomes a NOTIFICATION (RFC 4271 §4.5, §6). It is built only
 * through the RFC-named static factories below, each of which fills the Data field the RFC requires; code 0 cannot be
 * constructed. Decoders throw it; only the session layer catches it and turns it into bytes on the wire.
 * RFC 7606 outcomes that are not session-fatal (treat-as-withdraw, attribute-discard) are return values, not errors.
 */
import {
  CeaseSubcode,
  ERROR_NAMES,
  ErrorCode,
  FsmSubcode,
  HEADER_LENGTH,
  HeaderSubcode,
  MAX_MESSAGE_LENGTH,
  MAX_SHUTDOWN_COMMUNICATION_LENGTH,
  OpenSubcode,
  RouteRefreshSubcode,
  UpdateSubcode,
} from './constants.ts';

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff);
  return b;
}

/** Human text of a NOTIFICATION code/subcode pair, e.g. "Cease / Administrative Shutdown" (IANA names). */
export function describeNotification(code: number, subcode: number): string {
  const entry = ERROR_NAMES[code];
  if (!entry) return `Unknown error code ${code} / subcode ${subcode}`;
  const sub = entry.subcodes[subcode];
  return `${entry.name} / ${sub ?? `subcode ${subcode}`}`;
}

/**
 * Encodes an RFC 9003 shutdown communication: one length octet then UTF-8 text of at most 255 octets.
 * Longer text is truncated at a UTF-8 character boundary so the result stays valid UTF-8.
 */
export function encodeShutdownCommunication(text: string): Buffer {
  let bytes = Buffer.from(text, 'utf8');
  if (bytes.length > MAX_SHUTDOWN_COMMUNICATION_LENGTH) {
    let end = MAX_SHUTDOWN_COMMUNICATION_LENGTH;
    // Step back over UTF-8 continuation bytes (10xxxxxx) so a multi-byte character is never cut.
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    bytes = bytes.subarray(0, end);
  }
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/**
 * The most Data octets a NOTIFICATION can carry in any session: 4096 − 19 (header) − 2 (code, subcode) = 4075
 * (RFC 4271 §4.1, §4.5; a NOTIFICATION sent before or without RFC 8654 extended messages must fit 4096 octets).
 */
export const MAX_NOTIFICATION_DATA_LENGTH = MAX_MESSAGE_LENGTH - HEADER_LENGTH - 2;

/**
 * A session-fatal BGP protocol error: the content of the NOTIFICATION to send (RFC 4271 §4.5). `data` is at most
 * MAX_NOTIFICATION_DATA_LENGTH (4075) octets: longer Data (a whole large attribute or message) is truncated.
 */
export class BgpError extends Error {
  /** NOTIFICATION Error Code (1..7). */
  readonly code: ErrorCode;
  /** NOTIFICATION Error Subcode (0 = unspecific). */
  readonly subcode: number;
  /** NOTIFICATION Data field as the RFC requires for this code/subcode (a private copy, at most 4075 octets). */
  readonly data: Buffer;

  private constructor(code: ErrorCode, subcode: number, data: Buffer, detail?: string) {
    super(`${describeNotification(code, subcode)}${detail ? `: ${detail}` : ''}`);
    this.name = 'BgpError';
    this.code = code;
    this.subcode = subcode;
    // Data is cut to what a 4096-octet NOTIFICATION holds, so that the NOTIFICATION always fits (Data copied whole,
    // e.g. a 4096-octet ROUTE-REFRESH for 7/1, cannot be sent: test/bgp/codec/regressions.test.ts).
    this.data = Buffer.from(data.subarray(0, MAX_NOTIFICATION_DATA_LENGTH));
  }

  // --- Message Header Error (RFC 4271 §6.1) ---

  /** 1/1: the marker is not all ones. Data: empty. */
  static connectionNotSynchronized(): BgpError {
    return new BgpError(ErrorCode.MessageHeaderError, HeaderSubcode.ConnectionNotSynchronized, Buffer.alloc(0));
  }
  /** 1/2: the Length field is out of range for the message or type. Data: the 2-octet Length field. */
  static badMessageLength(length: number, detail?: string): BgpError {
    return new BgpError(ErrorCode.MessageHeaderError, HeaderSubcode.BadMessageLength, u16(length), detail ?? `length ${length}`);
  }
  /** 1/3: unknown message Type. Data: the Type octet. */
  static badMessageType(type: number): BgpError {
    return new BgpError(ErrorCode.MessageHeaderError, HeaderSubcode.BadMessageType, Buffer.from([type & 0xff]), `type ${type}`);
  }

  // --- OPEN Message Error (RFC 4271 §6.2, RFC 5492 §5) ---

  /** 2/0: an OPEN error with no more specific subcode (e.g. malformed optional parameters). Data: empty. */
  static openUnspecific(detail: string): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.Unspecific, Buffer.alloc(0), detail);
  }
  /** 2/1: unsupported version. Data: the largest locally supported version, 2 octets (4). */
  static unsupportedVersionNumber(received: number): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.UnsupportedVersionNumber, u16(4), `version ${received}`);
  }
  /** 2/2: unacceptable peer AS. Data: the 2-octet My Autonomous System field as received (RFC 4271 §6.2 leaves it empty; BIRD and GoBGP send the AS). */
  static badPeerAs(asField: number, detail?: string): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.BadPeerAs, u16(asField), detail ?? `AS ${asField}`);
  }
  /** 2/3: BGP Identifier is 0, multicast, or equal to ours on iBGP. Data: the 4-octet identifier. */
  static badBgpIdentifier(identifier: number): BgpError {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(identifier >>> 0);
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.BadBgpIdentifier, b);
  }
  /** 2/4: an optional parameter we do not recognise. Data: empty. */
  static unsupportedOptionalParameter(paramType: number): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.UnsupportedOptionalParameter, Buffer.alloc(0), `parameter ${paramType}`);
  }
  /** 2/6: Hold Time 1 or 2 seconds, or otherwise unacceptable. Data: the 2-octet Hold Time field. */
  static unacceptableHoldTime(holdTimeSec: number): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.UnacceptableHoldTime, u16(holdTimeSec), `hold time ${holdTimeSec}s`);
  }
  /** 2/7 (RFC 5492 §5): a capability we require is missing or unsupported. Data: the capability tuple(s) (code, length, value). */
  static unsupportedCapability(capabilityBytes: Buffer, detail?: string): BgpError {
    return new BgpError(ErrorCode.OpenMessageError, OpenSubcode.UnsupportedCapability, capabilityBytes, detail);
  }

  // --- UPDATE Message Error (RFC 4271 §6.3, RFC 7606) ---

  /** 3/1: withdrawn/attribute lengths inconsistent, or an attribute repeated. Data: empty. */
  static malformedAttributeList(detail: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.MalformedAttributeList, Buffer.alloc(0), detail);
  }
  /** 3/2: a well-known attribute we do not recognise. Data: the whole attribute (type, length, value). */
  static unrecognizedWellKnownAttribute(attribute: Buffer): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.UnrecognizedWellKnownAttribute, attribute);
  }
  /** 3/3: a mandatory well-known attribute is missing. Data: its 1-octet type code. */
  static missingWellKnownAttribute(typeCode: number): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.MissingWellKnownAttribute, Buffer.from([typeCode]), `type ${typeCode}`);
  }
  /** 3/4: attribute flags conflict with its type code. Data: the whole attribute. */
  static attributeFlagsError(attribute: Buffer, detail?: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.AttributeFlagsError, attribute, detail);
  }
  /** 3/5: attribute length wrong for its type. Data: the whole attribute. */
  static attributeLengthError(attribute: Buffer, detail?: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.AttributeLengthError, attribute, detail);
  }
  /** 3/6: ORIGIN value undefined. Data: the whole attribute. */
  static invalidOriginAttribute(attribute: Buffer): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.InvalidOriginAttribute, attribute);
  }
  /** 3/8: NEXT_HOP syntactically or semantically invalid. Data: the whole attribute. */
  static invalidNextHopAttribute(attribute: Buffer, detail?: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.InvalidNextHopAttribute, attribute, detail);
  }
  /** 3/9: an optional attribute's value is malformed. Data: the whole attribute. */
  static optionalAttributeError(attribute: Buffer, detail?: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.OptionalAttributeError, attribute, detail);
  }
  /** 3/10: NLRI field syntactically incorrect (e.g. prefix length > 32). Data: empty. */
  static invalidNetworkField(detail: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.InvalidNetworkField, Buffer.alloc(0), detail);
  }
  /** 3/11: AS_PATH syntactically incorrect. Data: empty. */
  static malformedAsPath(detail: string): BgpError {
    return new BgpError(ErrorCode.UpdateMessageError, UpdateSubcode.MalformedAsPath, Buffer.alloc(0), detail);
  }

  // --- Hold Timer Expired, FSM Error, Cease, ROUTE-REFRESH ---

  /** 4/0: no KEEPALIVE/UPDATE/NOTIFICATION within Hold Time (RFC 4271 §6.5). Data: empty. */
  static holdTimerExpired(): BgpError {
    return new BgpError(ErrorCode.HoldTimerExpired, 0, Buffer.alloc(0));
  }
  /**
   * 5/x: a message unexpected in the current state (RFC 6608 §4). Data: the received message Type, 1 octet.
   * `state` names the state: OpenSent → 5/1, OpenConfirm → 5/2, Established → 5/3, anything else 5/0.
   */
  static fsmError(state: string, messageType: number): BgpError {
    const subcode =
      state === 'OpenSent'
        ? FsmSubcode.UnexpectedMessageInOpenSent
        : state === 'OpenConfirm'
          ? FsmSubcode.UnexpectedMessageInOpenConfirm
          : state === 'Established'
            ? FsmSubcode.UnexpectedMessageInEstablished
            : FsmSubcode.UnspecifiedError;
    return new BgpError(ErrorCode.FsmError, subcode, Buffer.from([messageType & 0xff]), `message type ${messageType} in ${state}`);
  }
  /**
   * 6/x Cease (RFC 4486). For Administrative Shutdown (2) and Administrative Reset (4) an optional RFC 9003
   * shutdown communication is encoded into Data; for Maximum Number of Prefixes Reached (1) pass `data` as
   * AFI(2) SAFI(1) limit(4) per RFC 4486 §4.
   */
  static cease(subcode: number, options: { shutdownCommunication?: string; data?: Buffer } = {}): BgpError {
    let data = options.data ?? Buffer.alloc(0);
    if (
      options.shutdownCommunication !== undefined &&
      (subcode === CeaseSubcode.AdministrativeShutdown || subcode === CeaseSubcode.AdministrativeReset)
    ) {
      data = encodeShutdownCommunication(options.shutdownCommunication);
    }
    return new BgpError(ErrorCode.Cease, subcode, data, options.shutdownCommunication);
  }
  /**
   * 6/9 Cease / Hard Reset (RFC 8538 §3.1): ends a session whose peer negotiated the N bit without graceful restart
   * (the peer flushes our routes at once). Data: the inner NOTIFICATION's Error Code(1), Error Subcode(1) and Data,
   * e.g. the Cease 6/2 with its RFC 9003 text. Only a Cease can be wrapped here; Data is cut like any other.
   */
  static hardReset(inner: BgpError): BgpError {
    if (inner.code !== ErrorCode.Cease || inner.subcode === CeaseSubcode.HardReset) throw new RangeError(`Hard Reset wraps a Cease other than Hard Reset, got ${inner.code}/${inner.subcode}`);
    return new BgpError(ErrorCode.Cease, CeaseSubcode.HardReset, Buffer.concat([Buffer.from([inner.code, inner.subcode]), inner.data]), `inner ${inner.message}`);
  }
  /** 7/1: ROUTE-REFRESH with a bad length (RFC 7313 §5). Data: the complete received message. */
  static routeRefreshInvalidLength(message: Buffer): BgpError {
    return new BgpError(ErrorCode.RouteRefreshMessageError, RouteRefreshSubcode.InvalidMessageLength, message);
  }
}
