/**
 * The link bandwidth a node advertises for a VIP under `weighting: endpoints` (issue 18): its ready local endpoints
 * times the configured bandwidth per endpoint, as the link bandwidth extended community carries it (RFC 10005:
 * IEEE 754 single precision, bytes per second). Routers doing weighted ECMP (FRR: "Weighted ECMP using BGP link
 * bandwidth") split traffic in proportion, so a node with three ready endpoints gets three times the share of a node
 * with one.
 *
 * Only ratios matter to the router; the per-endpoint figure just has to be the same on every node. Float32 holds
 * integers exactly up to 2^24 (16 777 216), beyond that the value is rounded to the nearest float32 (relative error at
 * most 2^-24), which keeps ratios to 7 significant digits.
 */
import { linkBandwidth } from '../../bgp/main-thread.ts';
import type { ExtendedCommunity } from '../../bgp/main-thread.ts';

/** The largest finite IEEE 754 single-precision value, in bytes per second. */
export const MAX_LINK_BANDWIDTH = 3.4028234663852886e38;

/** The value to advertise, and whether it had to be clamped to MAX_LINK_BANDWIDTH. */
export interface EndpointBandwidth {
  /** Math.fround(endpoints × bytesPerSecondPerEndpoint), bytes per second (0 for no endpoints). */
  readonly bytesPerSecond: number;
  /** The product exceeded the largest float32 and was clamped (a configuration far beyond any real link). */
  readonly clamped: boolean;
}

/**
 * endpoints × bytesPerSecondPerEndpoint, rounded to the nearest float32 (what the wire carries).
 * @param endpoints ready local endpoints, an integer >= 0 (0 gives 0: such a node does not announce under
 *   externalTrafficPolicy Local at all)
 * @param bytesPerSecondPerEndpoint the configured bandwidth of one endpoint, bytes per second, finite and > 0
 * @throws RangeError for a negative or non-integer endpoint count, or a per-endpoint bandwidth that is not a finite
 *   number > 0
 */
export function endpointBandwidth(endpoints: number, bytesPerSecondPerEndpoint: number): EndpointBandwidth {
  if (!Number.isSafeInteger(endpoints) || endpoints < 0) throw new RangeError(`endpoints must be an integer >= 0, got ${endpoints}`);
  if (!Number.isFinite(bytesPerSecondPerEndpoint) || !(bytesPerSecondPerEndpoint > 0)) {
    throw new RangeError(`bandwidth per endpoint must be a finite number of bytes per second > 0, got ${bytesPerSecondPerEndpoint}`);
  }
  const product = endpoints * bytesPerSecondPerEndpoint;
  const f = Math.fround(product);
  if (!Number.isFinite(f) || f > MAX_LINK_BANDWIDTH) return { bytesPerSecond: MAX_LINK_BANDWIDTH, clamped: true };
  return { bytesPerSecond: f, clamped: false };
}

/**
 * The link bandwidth community for a node's endpoint count: transitive (type 0x00, sub-type 0x04; docs/routes.md
 * "Extended communities" says why), Global Administrator `localAs` (AS_TRANS above 65535, RFC 10005).
 * @throws RangeError as endpointBandwidth; Error for an AS outside 0..4294967295
 */
export function endpointLinkBandwidthCommunity(localAs: number, endpoints: number, bytesPerSecondPerEndpoint: number): ExtendedCommunity {
  return linkBandwidth(localAs, endpointBandwidth(endpoints, bytesPerSecondPerEndpoint).bytesPerSecond);
}
