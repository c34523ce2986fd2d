/**
 * Gate keys: what a health gate decides about. A Service VIP on this node, or a static route from the config.
 *
 * The health manager is keyed by text (the `gate` of a check spec, the key of `gate()` and `setAnnounced()`, the
 * `gate` field of `/api/v1/health`); this module is the one place that text is made and read:
 * - `svc:<namespace>/<name> <address>` for a Service VIP ("svc:shop/web 192.0.2.10");
 * - `route:<canonical prefix>` for a static route ("route:192.0.2.0/24").
 */
import { canonicalCIDR } from '../net/address.ts';

/** A Service VIP gate ("ns/name", address as in the Service) or a static route gate (canonical prefix). */
export type GateKey = { readonly kind: 'service'; readonly service: string; readonly address: string } | { readonly kind: 'route'; readonly prefix: string };

/** The gate key of one VIP of Service `service` ("ns/name"). */
export function serviceGate(service: string, address: string): GateKey {
  return { kind: 'service', service, address };
}

/**
 * The gate key of a static route (any CIDR text of it).
 * @throws Error when `prefix` is not a CIDR (the config schema rejects such routes)
 */
export function routeGate(prefix: string): GateKey {
  return { kind: 'route', prefix: canonicalCIDR(prefix).prefix };
}

/** The text form of a gate key, as the health manager and the admin API know it. */
export function gateKeyText(key: GateKey): string {
  return key.kind === 'service' ? `svc:${key.service} ${key.address}` : `route:${key.prefix}`;
}

/** The gate key of a text made by {@link gateKeyText}, or undefined for any other text (e.g. '' of a node check). */
export function parseGateKey(text: string): GateKey | undefined {
  if (text.startsWith('svc:')) {
    const space = text.indexOf(' ', 4);
    if (space < 0) return undefined;
    return { kind: 'service', service: text.slice(4, space), address: text.slice(space + 1) };
  }
  if (text.startsWith('route:')) return { kind: 'route', prefix: text.slice(6) };
  return undefined;
}
