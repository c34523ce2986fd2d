/**
 * What a valid configuration means that its operator should be told: said by `herald config check` (as warnings, exit
 * 0) and logged by the daemon when the configuration in force (the file merged with Herald's objects) comes to mean it.
 */
import type { Config, ConfigIssue } from './schema.ts';

/**
 * When Services are read and some advertisement (or the default one) announces LoadBalancer or external addresses,
 * but neither pools nor `allowedPrefixes` allow any: none of those addresses is announced (docs/decisions.md "Allowed
 * address space"). Says how to allow some. Undefined otherwise.
 */
export function noAddressSpaceNote(cfg: Config): ConfigIssue | undefined {
  if (cfg.source === undefined) return undefined;
  if ((cfg.pools?.length ?? 0) > 0 || (cfg.allowedPrefixes?.length ?? 0) > 0) return undefined;
  const ads = cfg.advertisements ?? [];
  const kinds = ads.length === 0 ? ['loadBalancer'] : ads.flatMap((a) => a.addressKinds);
  if (!kinds.includes('loadBalancer') && !kinds.includes('externalIP')) return undefined;
  return {
    path: 'allowedPrefixes',
    message:
      'neither pools nor allowedPrefixes are configured, so no LoadBalancer ingress address and no externalIP can be announced (ClusterIPs, service CIDRs and static routes can): list the CIDRs Herald may announce them in under allowedPrefixes (e.g. "allowedPrefixes: [203.0.113.0/24]"), or configure pools (in this file or as IPAddressPool objects)',
  };
}
