/**
 * The Cease a session sends when it is stopped or reset, and the RFC 8538 §5 rule for when that Cease goes inside a
 * Cease / Hard Reset: only where both sides set the N bit (RFC 8538 §3: a speaker SHOULD NOT send a Hard Reset to a
 * peer that did not), and then for the subcodes after which the peer must flush our routes at once.
 */
import { CeaseSubcode, ErrorCode } from '../constants.ts';
import type { GracefulRestartMode } from '../codec/open.ts';
import { BgpError } from '../errors.ts';

/**
 * A Cease to send: RFC 4486 subcode and, for Administrative Shutdown (2) and Reset (4), an RFC 9003 text.
 * `hardReset`: inside a Cease / Hard Reset where the N bit was negotiated (true), never (false), or by the RFC 8538
 * §5 default (absent: Maximum Number of Prefixes Reached, Administrative Shutdown and Peer De-configured).
 */
export interface CeaseRequest {
  readonly subcode: number;
  readonly shutdownCommunication?: string;
  readonly hardReset?: boolean;
}

/** stop() closes the connection without a NOTIFICATION (a restart under RFC 4724 graceful restart). */
export const WITHOUT_NOTIFICATION = 'withoutNotification';

/** How stop() ends the connection: a Cease, or no NOTIFICATION at all. */
export type StopRequest = CeaseRequest | typeof WITHOUT_NOTIFICATION;

/** Cease subcodes sent as Hard Reset by default where the N bit was negotiated (RFC 8538 §5). */
const HARD_RESET_BY_DEFAULT: ReadonlySet<number> = new Set([
  CeaseSubcode.MaximumNumberOfPrefixesReached,
  CeaseSubcode.AdministrativeShutdown,
  CeaseSubcode.PeerDeconfigured,
]);

/**
 * `error` as it goes on the wire in a session whose graceful restart agreement is `mode`: wrapped in a Cease /
 * Hard Reset (RFC 8538 §3.1) when the N bit was negotiated and `hardReset` asks for it (default: the RFC 8538 §5
 * subcodes); anything else unchanged. Never wraps what is not a Cease, nor a Hard Reset twice.
 */
export function withHardReset(error: BgpError, mode: GracefulRestartMode, hardReset?: boolean): BgpError {
  if (mode !== 'notification' || error.code !== ErrorCode.Cease || error.subcode === CeaseSubcode.HardReset) return error;
  return (hardReset ?? HARD_RESET_BY_DEFAULT.has(error.subcode)) ? BgpError.hardReset(error) : error;
}

/** The Cease of a request, before the Hard Reset rule. */
export function ceaseOf(c: CeaseRequest): BgpError {
  return BgpError.cease(c.subcode, c.shutdownCommunication !== undefined ? { shutdownCommunication: c.shutdownCommunication } : {});
}
