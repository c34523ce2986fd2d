/**
 * Stable JSON form of BGP messages for logs, the admin API and `herald decode`. Field names are RFC vocabulary and
 * documented in docs/codec.md; octet strings are lowercase hex without separators. `messageJsonText` is the form as
 * text (what `JSON.stringify(messageToJson(msg))` prints), written directly for UPDATEs (attributes-json.ts).
 */
import { describeNotification } from '../errors.ts';
import { CAPABILITY_NAMES, capabilityCode } from './capabilities.ts';
import { ROUTE_REFRESH_SUBTYPE_NAMES } from './route-refresh.ts';
import { familyOf } from './types.ts';
import type { BgpMessage, Capability } from './types.ts';
import { updateJsonFields, updateToJson } from './attributes-json.ts';

const ADD_PATH_MODES: Readonly<Record<number, string>> = { 1: 'receive', 2: 'send', 3: 'send/receive' };

function withFamily(afi: number, safi: number): Record<string, unknown> {
  const family = familyOf(afi, safi);
  return family ? { afi, safi, family } : { afi, safi };
}

/**
 * JSON of one capability: `{ code, name, ...fields }` where `name` is the IANA name and fields are the object's own
 * (`afi`, `safi`, `family` when known, `asNumber`, `restarting`, `notification`, `restartTimeSec`, `families`,
 * `hostname`, `domainName`; Unknown: `value` hex).
 */
export function capabilityToJson(cap: Capability): Record<string, unknown> {
  const code = capabilityCode(cap);
  const base: Record<string, unknown> = { code, name: CAPABILITY_NAMES[code] ?? 'Unknown' };
  switch (cap.type) {
    case 'Multiprotocol':
      return { ...base, ...withFamily(cap.afi, cap.safi) };
    case 'FourOctetAs':
      return { ...base, asNumber: cap.asNumber };
    case 'GracefulRestart':
      return {
        ...base,
        restarting: cap.restarting,
        notification: cap.notification,
        restartTimeSec: cap.restartTimeSec,
        families: cap.families.map((f) => ({ ...withFamily(f.afi, f.safi), forwardingPreserved: f.forwardingPreserved })),
      };
    case 'AddPath':
      return {
        ...base,
        families: cap.families.map((f) => ({ ...withFamily(f.afi, f.safi), sendReceive: f.sendReceive, mode: ADD_PATH_MODES[f.sendReceive] })),
      };
    case 'Fqdn':
      return { ...base, hostname: cap.hostname, domainName: cap.domainName };
    case 'Unknown':
      return { ...base, value: cap.value.toString('hex') };
    default:
      return base;
  }
}

/**
 * JSON of any message. Always has `type` ("OPEN", "UPDATE", "NOTIFICATION", "KEEPALIVE", "ROUTE-REFRESH").
 * - OPEN: `version`, `myAutonomousSystem`, `holdTime` (seconds), `bgpIdentifier`, `capabilities` (see
 *   `capabilityToJson`), and when present `parameterLayout`, `capabilityGroups`, `extendedOptionalParameters`,
 *   `otherParameters` [{ paramType, value hex }].
 * - NOTIFICATION: `errorCode`, `errorSubcode`, `errorName` ("Cease / Administrative Shutdown"), `data` hex, and
 *   `shutdownCommunication` when present.
 * - ROUTE-REFRESH: `afi`, `safi`, `family` when known, `subtype`, `subtypeName`, `extra` hex when present.
 * - UPDATE: `type` then the fields of `updateToJson` (attributes-json.ts).
 */
export function messageToJson(msg: BgpMessage): Record<string, unknown> {
  switch (msg.type) {
    case 'OPEN': {
      const j: Record<string, unknown> = {
        type: 'OPEN',
        version: msg.version,
        myAutonomousSystem: msg.myAutonomousSystem,
        holdTime: msg.holdTime,
        bgpIdentifier: msg.bgpIdentifier,
        capabilities: msg.capabilities.map(capabilityToJson),
      };
      if (msg.parameterLayout !== undefined) j.parameterLayout = msg.parameterLayout;
      if (msg.capabilityGroups !== undefined) j.capabilityGroups = [...msg.capabilityGroups];
      if (msg.extendedOptionalParameters !== undefined) j.extendedOptionalParameters = msg.extendedOptionalParameters;
      if (msg.otherParameters && msg.otherParameters.length > 0) {
        j.otherParameters = msg.otherParameters.map((o) => ({ paramType: o.paramType, value: o.value.toString('hex') }));
      }
      return j;
    }
    case 'NOTIFICATION': {
      const j: Record<string, unknown> = {
        type: 'NOTIFICATION',
        errorCode: msg.errorCode,
        errorSubcode: msg.errorSubcode,
        errorName: describeNotification(msg.errorCode, msg.errorSubcode),
        data: msg.data.toString('hex'),
      };
      if (msg.shutdownCommunication !== undefined) j.shutdownCommunication = msg.shutdownCommunication;
      return j;
    }
    case 'KEEPALIVE':
      return { type: 'KEEPALIVE' };
    case 'ROUTE-REFRESH': {
      const j: Record<string, unknown> = {
        type: 'ROUTE-REFRESH',
        ...withFamily(msg.afi, msg.safi),
        subtype: msg.subtype,
        subtypeName: ROUTE_REFRESH_SUBTYPE_NAMES[msg.subtype] ?? 'Unknown',
      };
      if (msg.extra) j.extra = msg.extra.toString('hex');
      return j;
    }
    case 'UPDATE':
      return updateToJson(msg, { type: 'UPDATE' });
    default:
      return assertNever(msg);
  }
}

/**
 * JSON text of any message: exactly `JSON.stringify(messageToJson(msg))`. UPDATEs (`{"type":"UPDATE",...}`, the
 * fields of updateJsonText) are written without building the object view; the other types are rare and stringified.
 * Never throws.
 */
export function messageJsonText(msg: BgpMessage): string {
  return msg.type === 'UPDATE' ? '{"type":"UPDATE",' + updateJsonFields(msg) + '}' : JSON.stringify(messageToJson(msg));
}

function assertNever(x: never): never {
  throw new Error(`unexpected message ${JSON.stringify(x)}`);
}
