/**
 * The cross-field rules of Herald's configuration file, on a structurally valid one (schema.ts holds the structure:
 * each field alone): unique names and peer endpoints, references between sections (a route's or an advertisement's
 * peers, pools, community aliases), address families that must agree, usable next hops, host bits, what fits one
 * UPDATE, options that go together. `load.ts` runs both; src/crd/merge.ts checks each of Herald's objects by them
 * too. Paths and messages are those of schema.ts (`peers[1].keepaliveTime: must be below holdTime (90 s)`).
 */
import { BlockList } from 'node:net';
import type { Family } from '../../bgp/main-thread.ts';
import { MAX_COMMUNITY_OCTETS, parseCommunity } from '../../bgp/main-thread.ts';
import { addressValue, canonicalCIDR, canonicalIP, ipFamilyOf, toPrefix } from '../net/address.ts';
import { parseCommunityRange, reachesWellKnown } from '../net/community-ranges.ts';
import { parseExtendedCommunityText } from './extended-communities.ts';
import type { Config, ConfigIssue, StaticRouteConfig } from './schema.ts';
import { formatPath, listenerClash, MAX_U32, parses, resolveCommunityAliases } from './schema.ts';
import { runSync } from './slices.ts';
import type { Steps } from './slices.ts';

/** Addresses that can never be a BGP next hop: unspecified, limited broadcast, multicast (RFC 4271 §5.1.3). */
const badNextHops = (() => {
  const b = new BlockList();
  b.addAddress('0.0.0.0', 'ipv4');
  b.addAddress('255.255.255.255', 'ipv4');
  b.addSubnet('224.0.0.0', 4, 'ipv4');
  b.addAddress('::', 'ipv6');
  b.addSubnet('ff00::', 8, 'ipv6');
  return b;
})();
const linkLocalV6 = (() => {
  const b = new BlockList();
  b.addSubnet('fe80::', 10, 'ipv6');
  return b;
})();

/** Why `addr` cannot be a next hop, or undefined when it can. */
function nextHopProblem(addr: string): string | undefined {
  const v6 = ipFamilyOf(addr) === 'IPv6';
  const type = v6 ? 'ipv6' : 'ipv4';
  if (!badNextHops.check(addr, type)) {
    // A link-local address alone is not a usable next hop: RFC 2545 §3 needs a global one (the link-local may go with it).
    if (v6 && linkLocalV6.check(addr, 'ipv6')) return `${addr} is an IPv6 link-local address; a next hop must be a global (or unique-local) address`;
    return undefined;
  }
  if (addressValue(addr)?.value === 0n) return `${addr} is the unspecified address, not a usable next hop (leave it out to use the session local address)`;
  if (addr === '255.255.255.255') return `${addr} is the broadcast address, not a usable next hop`;
  return `${addr} is a multicast address, not a usable next hop`;
}

/**
 * A valid CIDR's canonical prefix and route family, and "host bits set; did you mean X?" when it has bits set beyond
 * its length. One parse for a host route (/32, /128), two otherwise.
 */
function cidrFacts(cidr: string): { prefix: string; family: Family; hostBits: string | undefined } {
  const { prefix, family } = canonicalCIDR(cidr);
  if (prefix === cidr) return { prefix, family, hostBits: undefined }; // canonical text: no host bits
  const slash = cidr.lastIndexOf('/');
  const length = Number(cidr.slice(slash + 1));
  if (length === (family === 'ipv6-unicast' ? 128 : 32)) return { prefix, family, hostBits: undefined };
  const host = toPrefix(cidr.slice(0, slash)).prefix;
  const same = host.slice(0, host.lastIndexOf('/')) === prefix.slice(0, prefix.lastIndexOf('/'));
  return { prefix, family, hostBits: same ? undefined : `host bits set; did you mean ${prefix}?` };
}

function hostBitsProblem(cidr: string): string | undefined {
  return cidrFacts(cidr).hostBits;
}


/** The 32-bit value of a community text, or the text itself when the codec does not parse it (counted apart). */
function communityValue(text: string): number | string {
  try {
    return parseCommunity(text);
  } catch {
    return text;
  }
}

/**
 * Why the communities of one route cannot be sent, or undefined. Octets as the speaker counts them: 4 per distinct
 * standard community, 12 per large community, 8 per extended community, 20 per IPv6 address specific one.
 */
function communitiesProblem(r: { communities?: readonly string[] | undefined; largeCommunities?: readonly string[] | undefined; extendedCommunities?: readonly string[] | undefined }): string | undefined {
  let octets = 4 * new Set(r.communities?.map(communityValue)).size + 12 * (r.largeCommunities?.length ?? 0);
  for (const text of r.extendedCommunities ?? []) {
    const ec = parseExtendedCommunityText(text);
    octets += 'error' in ec ? 0 : ec.attribute === 'ipv6' ? 20 : 8;
  }
  if (octets <= MAX_COMMUNITY_OCTETS) return undefined;
  return `communities take ${octets} octets (4 per community, 12 per large, 8 per extended, 20 per IPv6 extended community); at most ${MAX_COMMUNITY_OCTETS} fit one 4096-octet UPDATE with the other attributes`;
}

/** Routes checked between two pauses of {@link semanticChecks}. */
const ROUTES_PER_STEP = 500;

/** Options of {@link semanticErrors}. */
export interface SemanticOptions {
  /** Peer names that route and advertisement `peers` may name besides `cfg.peers` (peers of node overrides). */
  readonly otherPeerNames?: ReadonlySet<string>;
}

/**
 * Cross-field checks on a structurally valid config.
 * @returns every problem found (empty when the config is consistent).
 */
export function semanticErrors(cfg: Config, opts: SemanticOptions = {}): ConfigIssue[] {
  return runSync(semanticChecks(cfg, opts));
}

/** {@link semanticErrors} as pausable work (slices.ts): it pauses every few thousand static routes. */
export function* semanticChecks(cfg: Config, opts: SemanticOptions = {}): Steps<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const add = (path: readonly PropertyKey[], message: string) => issues.push({ path: formatPath(path), message });

  const names = new Map<string, number>();
  const endpoints = new Map<string, number>();
  /** BFD sessions by hop mode, address and node selection: the engine runs one per address and hop mode. */
  const bfdSessions = new Map<string, number>();
  cfg.peers.forEach((p, i) => {
    const prev = names.get(p.name);
    if (prev !== undefined) add(['peers', i, 'name'], `duplicate peer name "${p.name}" (also peers[${prev}])`);
    else names.set(p.name, i);
    const ep = `${p.address}|${p.port}`;
    const prevEp = endpoints.get(ep);
    if (prevEp !== undefined) add(['peers', i, 'address'], `duplicate peer address ${p.address} port ${p.port} (also peers[${prevEp}])`);
    else endpoints.set(ep, i);
    if (p.keepaliveTime !== undefined && p.holdTime !== 0 && p.keepaliveTime >= p.holdTime) {
      add(['peers', i, 'keepaliveTime'], `must be below holdTime (${p.holdTime} s)`);
    }
    if (p.passive && !cfg.bgp.listen) add(['peers', i, 'passive'], 'a passive peer needs bgp.listen');
    if (p.localAddress !== undefined && ipFamilyOf(p.localAddress) !== ipFamilyOf(p.address)) {
      add(['peers', i, 'localAddress'], `must be of the same address family as address ${p.address}`);
    }
    if (p.ebgpMultihop !== undefined && p.ttlSecurity) add(['peers', i, 'ttlSecurity'], 'cannot be combined with ebgpMultihop');
    if (p.ebgpMultihop !== undefined && p.peerAs === (p.localAs ?? cfg.bgp.localAs)) add(['peers', i, 'ebgpMultihop'], "applies to eBGP peers only (the peer's AS number equals ours)");
    if (p.nodeSelector !== undefined && p.nodeSelectors !== undefined) add(['peers', i, 'nodeSelector'], 'set nodeSelector or nodeSelectors, not both');
    if (p.password !== undefined && p.passwordSecret !== undefined) add(['peers', i, 'passwordSecret'], 'set password or passwordSecret, not both');
    if (p.passwordSecret !== undefined && cfg.source?.kubernetes === undefined) add(['peers', i, 'passwordSecret'], 'needs source.kubernetes (the Secret is read through the apiserver)');
    if (new Set(p.families).size !== p.families.length) add(['peers', i, 'families'], 'lists a family twice');
    const bfdMultihop = p.bfd?.multihop ?? (p.ebgpMultihop !== undefined && p.ebgpMultihop > 1);
    if (p.bfd?.minimumTtl !== undefined && !bfdMultihop) add(['peers', i, 'bfd', 'minimumTtl'], 'applies to multihop BFD only (single-hop always requires TTL 255); set bfd.multihop or remove it');
    if (p.bfd?.enabled === true) {
      // Two peers at one address (other ports) on the same nodes: a packet is matched to its session by source
      // address (RFC 5880 §6.8.6), so only one of them could have BFD (issue 35 N10). Peers on other nodes may.
      const hop = bfdMultihop ? 'multihop' : 'single-hop';
      const key = `${hop} ${canonicalIP(p.address) ?? p.address} ${JSON.stringify(p.nodeSelector ?? null)} ${JSON.stringify(p.nodeSelectors ?? null)}`;
      const prevBfd = bfdSessions.get(key);
      if (prevBfd !== undefined) add(['peers', i, 'bfd', 'enabled'], `a second ${hop} BFD session to ${p.address} (also peers[${prevBfd}]) on the same nodes: one BFD session runs per address and hop mode (RFC 5880 §6.8.6 finds it by source address); enable BFD on one of them`);
      else bfdSessions.set(key, i);
    }
    for (const k of ['nextHop', 'nextHopV6'] as const) {
      const nh = p[k];
      const why = nh !== undefined ? nextHopProblem(nh) : undefined;
      if (why !== undefined) add(['peers', i, k], why);
    }
  });

  const checkPeerRefs = (list: string[] | undefined, base: PropertyKey[]) => {
    list?.forEach((n, j) => {
      if (!names.has(n) && opts.otherPeerNames?.has(n) !== true) add([...base, j], `unknown peer "${n}"`);
    });
  };
  const prefixes = new Map<string, number>();
  for (let i = 0; i < cfg.routes.length; i++) {
    if (i > 0 && i % ROUTES_PER_STEP === 0) yield;
    const r = cfg.routes[i] as StaticRouteConfig;
    if (r.peers !== undefined) checkPeerRefs(r.peers, ['routes', i, 'peers']);
    const { prefix, family, hostBits } = cidrFacts(r.prefix);
    const prev = prefixes.get(prefix);
    if (prev !== undefined) add(['routes', i, 'prefix'], `duplicate route ${prefix} (also routes[${prev}])`);
    else prefixes.set(prefix, i);
    if (hostBits !== undefined) add(['routes', i, 'prefix'], hostBits);
    if (r.communities !== undefined || r.largeCommunities !== undefined || r.extendedCommunities !== undefined) {
      const why = communitiesProblem(r);
      if (why !== undefined) add(['routes', i, r.communities !== undefined ? 'communities' : r.largeCommunities !== undefined ? 'largeCommunities' : 'extendedCommunities'], why);
    }
    const ipFamily = family === 'ipv4-unicast' ? 'IPv4' : 'IPv6';
    if (r.nextHop !== undefined && ipFamilyOf(r.nextHop) !== ipFamily) {
      add(['routes', i, 'nextHop'], `must be an ${ipFamily} address for prefix ${prefix}`);
    } else if (r.nextHop !== undefined) {
      const why = nextHopProblem(r.nextHop);
      if (why !== undefined) add(['routes', i, 'nextHop'], why);
    }
    const hc = r.healthCheck;
    if (hc) {
      // The effective timing is the override, else healthChecks.*: the probe is cut at min(timeout, interval) at run time.
      const interval = hc.interval ?? cfg.healthChecks.interval;
      const timeout = hc.timeout ?? cfg.healthChecks.timeout;
      if (timeout > interval) {
        const src = (own: number | undefined, what: string) => (own !== undefined ? 'this check' : `healthChecks.${what}`);
        add(['routes', i, 'healthCheck', hc.timeout !== undefined ? 'timeout' : 'interval'], `effective timeout ${timeout} s (${src(hc.timeout, 'timeout')}) must not exceed the effective interval ${interval} s (${src(hc.interval, 'interval')})`);
      }
      if (hc.kind === 'tcp') {
        if (hc.path !== undefined) add(['routes', i, 'healthCheck', 'path'], 'only for kind http/https (this check is tcp)');
        if (hc.expectedStatus !== undefined) add(['routes', i, 'healthCheck', 'expectedStatus'], 'only for kind http/https (this check is tcp)');
      }
    }
  }
  for (const key of ['serviceCIDRs', 'allowedPrefixes'] as const) {
    cfg[key]?.forEach((c, i) => {
      const hostBits = hostBitsProblem(c);
      if (hostBits !== undefined) add([key, i], hostBits);
    });
  }
  const advNames = new Set<string>();
  cfg.advertisements?.forEach((a, i) => {
    if (advNames.has(a.name)) add(['advertisements', i, 'name'], `duplicate advertisement name "${a.name}"`);
    advNames.add(a.name);
    checkPeerRefs(a.peers, ['advertisements', i, 'peers']);
    if (a.nodeSelector !== undefined && a.nodeSelectors !== undefined) add(['advertisements', i, 'nodeSelector'], 'set nodeSelector or nodeSelectors, not both');
    if (a.serviceSelector !== undefined && a.serviceSelectors !== undefined) add(['advertisements', i, 'serviceSelector'], 'set serviceSelector or serviceSelectors, not both');
    const resolved = resolveCommunityAliases(a, cfg.communityAliases);
    for (const name of resolved.unknown) add(['advertisements', i, 'communities', a.communities?.indexOf(name) ?? 0], `"${name}" is neither a community nor the name of a communityAliases entry: define the alias, or write the value`);
    const why = communitiesProblem(resolved);
    if (why !== undefined) add(['advertisements', i, a.communities !== undefined ? 'communities' : 'largeCommunities'], why);
    a.serviceAttributes?.communities?.forEach((c, j) => {
      if (reachesWellKnown(parseCommunityRange(c))) {
        add(['advertisements', i, 'serviceAttributes', 'communities', j], `${c} reaches into the well-known communities (65535:x), which never come from a Service: set them in this advertisement's communities`);
      }
    });
    a.allowedPrefixes?.forEach((c, j) => {
      const hostBits = hostBitsProblem(c);
      if (hostBits !== undefined) add(['advertisements', i, 'allowedPrefixes', j], hostBits);
    });
    if (a.bandwidthPerEndpoint !== undefined && a.weighting === undefined) add(['advertisements', i, 'bandwidthPerEndpoint'], 'applies with weighting: endpoints only; set weighting or remove it');
    if (a.locality?.preferLocal && a.locality.med === undefined && a.locality.prependOthers === undefined) {
      add(['advertisements', i, 'locality'], 'set med, prependOthers or both: how the nodes without a local endpoint are made less preferred');
    }
    if (a.locality?.med !== undefined && (a.med ?? 0) + a.locality.med > MAX_U32) add(['advertisements', i, 'locality', 'med'], `med ${a.med ?? 0} + locality.med ${a.locality.med} exceeds 4294967295`);
    if ((a.maxNodesPerVip !== undefined || a.weighting !== undefined || a.locality !== undefined) && a.addressKinds.length === 1 && a.addressKinds[0] === 'serviceCIDR') {
      add(['advertisements', i, a.maxNodesPerVip !== undefined ? 'maxNodesPerVip' : a.weighting !== undefined ? 'weighting' : 'locality'], 'applies to Service VIPs (loadBalancer, externalIP, clusterIP), not to serviceCIDR');
    }
  });
  const aliasNames = new Set<string>();
  cfg.communityAliases?.forEach((a, i) => {
    if (aliasNames.has(a.name)) add(['communityAliases', i, 'name'], `duplicate alias "${a.name}"`);
    aliasNames.add(a.name);
    if (parses(parseCommunity, a.name)) add(['communityAliases', i, 'name'], `"${a.name}" is already a community (a well-known name): choose another alias`);
  });
  const poolNames = new Set<string>();
  cfg.pools?.forEach((p, i) => {
    if (poolNames.has(p.name)) add(['pools', i, 'name'], `duplicate pool name "${p.name}"`);
    poolNames.add(p.name);
    if (p.serviceSelector !== undefined && p.serviceSelectors !== undefined) add(['pools', i, 'serviceSelector'], 'set serviceSelector or serviceSelectors, not both');
    p.addresses.forEach((a, j) => {
      if (a.includes('-')) {
        const [from = '', to = ''] = a.split('-').map((x) => x.trim());
        if ((addressValue(from)?.value ?? 0n) > (addressValue(to)?.value ?? 0n)) add(['pools', i, 'addresses', j], `range is reversed: ${from} comes after ${to} (did you mean ${to}-${from}?)`);
      } else {
        const hostBits = hostBitsProblem(a);
        if (hostBits !== undefined) add(['pools', i, 'addresses', j], hostBits);
      }
    });
  });
  if (cfg.metrics?.address !== undefined) {
    const clash = listenerClash(cfg.admin, { address: cfg.metrics.address, port: cfg.metrics.port });
    if (clash !== undefined) add(['metrics', 'address'], clash);
  }
  const fc = cfg.flapControl;
  if (fc.suppressThreshold <= fc.reuseThreshold) add(['flapControl', 'suppressThreshold'], 'must be above reuseThreshold');
  if (cfg.healthChecks.timeout > cfg.healthChecks.interval) add(['healthChecks', 'timeout'], 'must not exceed interval');
  return issues;
}
