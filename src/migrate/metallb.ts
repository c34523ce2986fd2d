/**
 * `herald migrate metallb`: MetalLB's BGP-mode objects (metallb.io/v1beta1 and v1beta2: IPAddressPool,
 * BGPAdvertisement, BGPPeer, BFDProfile, Community) → Herald's (herald.io/v1alpha1, docs/metallb-migration.md), and a
 * note for every field that could not be carried or that needs the operator's hand. Pure: objects in, objects and
 * notes out; every object written is checked by Herald's own reading of it (src/crd/objects.ts `readObject`), so what
 * the tool writes, Herald takes.
 *
 * Field meanings are MetalLB's API types (api/v1beta1/*_types.go, api/v1beta2/bgppeer_types.go) and its config
 * reading (internal/config/config.go): durations are Go durations ("90s", "1m30s"); `serviceAllocation.priority` 0 is
 * "no priority"; a BGPAdvertisement without pools selects every pool; a community is "A:B", "large:A:B:C" or a
 * Community alias; `ebgpMultiHop: true` is FRR's `ebgp-multihop` (TTL 255); a peer without `dualStackAddressFamily`
 * carries its session's address family only. L2 mode has no Herald equivalent: Herald speaks BGP only.
 */
import { readObject } from '../crd/objects.ts';
import type { ConfigKind, HeraldObject } from '../k8s/herald-kinds.ts';
import { ipFamilyOf } from '../net/address.ts';

/** One note of a migration: `refused` (not carried: something MetalLB did, Herald will not) or `action` (carried; what the operator should know or do). */
export interface MigrationNote {
  readonly level: 'refused' | 'action';
  /** `Kind namespace/name` of the MetalLB object. */
  readonly object: string;
  /** The MetalLB field, `spec.…` (absent: the whole object). */
  readonly field?: string;
  readonly message: string;
}

/** What {@link migrateMetalLB} gives: Herald's objects, in the order read, and the notes. */
export interface Migration {
  readonly objects: HeraldObject[];
  readonly notes: MigrationNote[];
}

/** Options of {@link migrateMetalLB}. */
export interface MigrateOptions {
  /** Herald's namespace, where its objects and the peers' Secrets live (default herald-system). */
  readonly namespace?: string;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const GROUP = 'metallb.io/';
const HERALD_API = 'herald.io/v1alpha1';

/** The objects of the input documents: each document an object, a `kind: List`, or empty. */
export function inputObjects(docs: readonly unknown[]): Obj[] {
  const out: Obj[] = [];
  for (const d of docs) {
    if (!isObj(d)) continue;
    if (typeof d['kind'] === 'string' && d['kind'].endsWith('List') && Array.isArray(d['items'])) out.push(...d['items'].filter(isObj));
    else out.push(d);
  }
  return out;
}

/** Seconds of a Go duration ("90s", "1m30s", "1h"), or undefined when it is not a whole number of seconds. */
export function goDurationSeconds(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^(\d+(\.\d+)?(h|m|s|ms|us|µs|ns))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(m[1]) * (unit[m[2] as string] as number);
  const rounded = Math.round(total * 1e6) / 1e6;
  return Number.isInteger(rounded) ? rounded : undefined;
}

/** Which MetalLB kinds are read, and what is said of the others. */
const STATUS_KINDS = new Set(['ServiceBGPStatus', 'ServiceL2Status', 'BGPSessionState', 'ConfigurationState']);

/**
 * MetalLB objects → Herald's. Reads BFDProfile and Community objects first (peers and advertisements refer to them
 * by name), then writes one Herald object per IPAddressPool, BGPPeer and BGPAdvertisement.
 */
export function migrateMetalLB(input: readonly Obj[], o: MigrateOptions = {}): Migration {
  const namespace = o.namespace ?? 'herald-system';
  const notes: MigrationNote[] = [];
  const objects: HeraldObject[] = [];
  const nameOf = (x: Obj) => {
    const m = isObj(x['metadata']) ? x['metadata'] : {};
    return { name: typeof m['name'] === 'string' ? m['name'] : '', ns: typeof m['namespace'] === 'string' ? m['namespace'] : '', labels: isObj(m['labels']) ? (m['labels'] as Record<string, string>) : undefined };
  };
  const label = (x: Obj) => `${String(x['kind'])} ${nameOf(x).ns ? `${nameOf(x).ns}/` : ''}${nameOf(x).name}`;
  const metallb = input.filter((x) => typeof x['apiVersion'] === 'string' && x['apiVersion'].startsWith(GROUP));
  for (const x of input) {
    if (metallb.includes(x)) continue;
    const what = `${String(x['kind'] ?? '(no kind)')} ${nameOf(x).name}`.trim();
    if (x['kind'] === 'ConfigMap' && nameOf(x).ns === 'metallb-system') {
      notes.push({ level: 'refused', object: label(x), message: "MetalLB's ConfigMap configuration (before 0.13) is not read: convert it to MetalLB's objects first (MetalLB's configmaptocrs), then run this again" });
    } else notes.push({ level: 'refused', object: what, message: `not a MetalLB object (apiVersion ${JSON.stringify(x['apiVersion'])}): left out` });
  }
  const byKind = (kind: string) => metallb.filter((x) => x['kind'] === kind);
  const spec = (x: Obj): Obj => (isObj(x['spec']) ? x['spec'] : {});

  // Community aliases: substituted by their values (a large one "large:A:B:C" becomes a large community).
  const aliases = new Map<string, string>();
  for (const c of byKind('Community')) {
    for (const a of Array.isArray(spec(c)['communities']) ? (spec(c)['communities'] as unknown[]) : []) {
      if (isObj(a) && typeof a['name'] === 'string' && typeof a['value'] === 'string') aliases.set(a['name'], a['value']);
    }
  }
  // BFD profiles: inlined into the peers that name them.
  const bfdProfiles = new Map(byKind('BFDProfile').map((b) => [nameOf(b).name, b]));
  const usedProfiles = new Set<string>();

  const emit = (kind: ConfigKind, from: Obj, name: string, body: Obj, labels?: Record<string, string>) => {
    const obj: HeraldObject = { apiVersion: HERALD_API, kind, metadata: { name, namespace, ...(labels !== undefined ? { labels } : {}) }, spec: body };
    const read = readObject(kind, obj);
    if (read.ok) objects.push(obj);
    else notes.push({ level: 'refused', object: label(from), message: `Herald refuses the ${kind} it would become: ${read.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` });
  };

  for (const p of byKind('IPAddressPool')) {
    const s = spec(p);
    const body: Obj = {};
    if (Array.isArray(s['addresses'])) body['addresses'] = (s['addresses'] as unknown[]).map((a) => (typeof a === 'string' ? a.replace(/\s*-\s*/, '-').trim() : a));
    if (s['autoAssign'] === false) body['autoAssign'] = false;
    if (s['avoidBuggyIPs'] === true) body['avoidBuggyIPs'] = true;
    const alloc = isObj(s['serviceAllocation']) ? s['serviceAllocation'] : undefined;
    if (alloc !== undefined) {
      const out: Obj = {};
      // MetalLB: priority 0 (or unset) is no priority: tried after the pools that have one.
      if (typeof alloc['priority'] === 'number' && alloc['priority'] !== 0) out['priority'] = alloc['priority'];
      for (const f of ['namespaces', 'namespaceSelectors', 'serviceSelectors']) if (Array.isArray(alloc[f]) && (alloc[f] as unknown[]).length > 0) out[f] = alloc[f];
      if (Object.keys(out).length > 0) body['serviceAllocation'] = out;
    }
    emit('IPAddressPool', p, nameOf(p).name, body, nameOf(p).labels);
  }

  for (const p of byKind('BGPPeer')) {
    const s = spec(p);
    const at = (field: string, message: string, level: MigrationNote['level'] = 'refused') => notes.push({ level, object: label(p), field: `spec.${field}`, message });
    const body: Obj = {};
    for (const [from, to] of [['myASN', 'myASN'], ['peerASN', 'peerASN'], ['peerAddress', 'peerAddress'], ['sourceAddress', 'sourceAddress'], ['peerPort', 'peerPort'], ['nodeSelectors', 'nodeSelectors']] as const) {
      const v = s[from];
      if (v !== undefined && v !== '' && v !== 0 && !(Array.isArray(v) && v.length === 0)) body[to] = v;
    }
    for (const [from, to] of [['holdTime', 'holdTime'], ['keepaliveTime', 'keepaliveTime'], ['connectTime', 'connectTime']] as const) {
      if (s[from] === undefined) continue;
      const sec = goDurationSeconds(s[from]);
      if (sec === undefined) at(from, `${JSON.stringify(s[from])} is not a whole number of seconds: Herald counts ${to} in seconds; left out (the default applies)`);
      else body[to] = sec;
    }
    if (s['ebgpMultiHop'] === true) body['ebgpMultihop'] = 255;
    const family = typeof s['peerAddress'] === 'string' ? ipFamilyOf(s['peerAddress']) : undefined;
    if (family !== undefined) body['families'] = s['dualStackAddressFamily'] === true ? ['ipv4-unicast', 'ipv6-unicast'] : [family === 'IPv4' ? 'ipv4-unicast' : 'ipv6-unicast'];
    if (s['enableGracefulRestart'] === true) body['gracefulRestart'] = { enabled: true };
    if (typeof s['bfdProfile'] === 'string' && s['bfdProfile'] !== '') {
      const prof = bfdProfiles.get(s['bfdProfile']);
      if (prof === undefined) at('bfdProfile', `BFDProfile "${s['bfdProfile']}" is not in the input: no BFD for this peer (add the profile to the input)`);
      else {
        usedProfiles.add(s['bfdProfile']);
        const b = spec(prof);
        const bfd: Obj = { enabled: true };
        for (const f of ['transmitInterval', 'receiveInterval', 'detectMultiplier', 'minimumTtl']) if (typeof b[f] === 'number') bfd[f] = b[f];
        if (b['passiveMode'] === true) bfd['passive'] = true;
        if (b['echoMode'] === true) at('bfdProfile', `BFDProfile "${s['bfdProfile']}" sets echoMode: Herald's BFD has no echo function (RFC 5880 §6.4); asynchronous mode only`);
        body['bfd'] = bfd;
      }
    }
    if (isObj(s['passwordSecret']) && typeof s['passwordSecret']['name'] === 'string' && s['passwordSecret']['name'] !== '') {
      const secret = s['passwordSecret']['name'];
      body['passwordSecret'] = { name: secret, key: 'password' };
      const from = typeof s['passwordSecret']['namespace'] === 'string' ? s['passwordSecret']['namespace'] : nameOf(p).ns || 'metallb-system';
      at('passwordSecret', `copy Secret ${from}/${secret} into ${namespace} (Herald reads Secrets in its own namespace only; the key "password"): kubectl -n ${from} get secret ${secret} -o json | jq '.metadata={name:.metadata.name,namespace:"${namespace}"}' | kubectl apply -f -`, 'action');
    }
    if (typeof s['password'] === 'string' && s['password'] !== '') {
      const secret = `${nameOf(p).name}-password`;
      body['passwordSecret'] = { name: secret, key: 'password' };
      at('password', `an inline password is never written into Herald's objects: create the Secret it now names, e.g. kubectl -n ${namespace} create secret generic ${secret} --from-literal=password=… (the value is not repeated here)`, 'action');
    }
    if (typeof s['routerID'] === 'string' && s['routerID'] !== '') at('routerID', `a router ID per peer has no Herald equivalent: Herald has one router ID per node (bgp.routerId, or a BGPNodeConfigOverride's routerID named after the node); left out`);
    if (typeof s['interface'] === 'string' && s['interface'] !== '') at('interface', 'unnumbered BGP (peering over an interface) is not supported: Herald dials an address; the peer is left out');
    if (typeof s['dynamicASN'] === 'string' && s['dynamicASN'] !== '') at('dynamicASN', 'a dynamic peer AS (internal/external) is not supported: set peerASN; the peer is left out');
    if (typeof s['localASN'] === 'number' && s['localASN'] !== 0) at('localASN', `local-as replace-as is not supported; set myASN ${s['localASN']} on the peer if that is the AS the router expects; left out`);
    if (typeof s['vrf'] === 'string' && s['vrf'] !== '') at('vrf', 'peering from a host VRF is not supported: Herald uses the node\'s default routing table; the peer is left out');
    if (s['disableMP'] === true) at('disableMP', 'ignored: Herald negotiates each address family on its own (families), which is what disableMP asked for', 'action');
    const skip = (typeof s['interface'] === 'string' && s['interface'] !== '') || (typeof s['dynamicASN'] === 'string' && s['dynamicASN'] !== '') || (typeof s['vrf'] === 'string' && s['vrf'] !== '');
    if (!skip) emit('BGPPeer', p, nameOf(p).name, body);
  }
  for (const name of bfdProfiles.keys()) if (!usedProfiles.has(name)) notes.push({ level: 'action', object: label(bfdProfiles.get(name) as Obj), message: 'no peer in the input names this profile: nothing to carry (Herald sets BFD inline in each BGPPeer)' });

  for (const a of byKind('BGPAdvertisement')) {
    const s = spec(a);
    const body: Obj = {};
    for (const f of ['aggregationLength', 'aggregationLengthV6', 'localPref', 'ipAddressPools', 'ipAddressPoolSelectors', 'nodeSelectors', 'peers', 'serviceSelectors']) {
      const v = s[f];
      if (v !== undefined && v !== 0 && !(Array.isArray(v) && v.length === 0)) body[f] = v;
    }
    const communities: string[] = [];
    const large: string[] = [];
    for (const c of Array.isArray(s['communities']) ? (s['communities'] as unknown[]) : []) {
      if (typeof c !== 'string') continue;
      const value = aliases.get(c) ?? c;
      if (value.startsWith('large:')) large.push(value.slice('large:'.length));
      else communities.push(value);
      if (aliases.has(c)) notes.push({ level: 'action', object: label(a), field: 'spec.communities', message: `the Community alias "${c}" is written as its value ${value.startsWith('large:') ? `(large community ${value.slice(6)})` : value}` });
    }
    const v4 = typeof s['aggregationLength'] === 'number' && s['aggregationLength'] < 32;
    const v6 = typeof s['aggregationLengthV6'] === 'number' && s['aggregationLengthV6'] < 128;
    if (v4 || v6) {
      notes.push({ level: 'action', object: label(a), field: v4 ? 'spec.aggregationLength' : 'spec.aggregationLengthV6', message: "Herald announces an aggregate only when it lies wholly inside its pools or allowedPrefixes (docs/security.md): list the aggregates this makes in allowedPrefixes of Herald's configuration, or they stay unannounced (PrefixNotAllowed)" });
    }
    if (communities.length > 0) body['communities'] = communities;
    if (large.length > 0) body['largeCommunities'] = large;
    emit('BGPAdvertisement', a, nameOf(a).name, body);
  }

  for (const x of metallb) {
    const kind = String(x['kind']);
    if (['IPAddressPool', 'BGPPeer', 'BGPAdvertisement', 'BFDProfile', 'Community'].includes(kind)) continue;
    if (kind === 'L2Advertisement') notes.push({ level: 'refused', object: label(x), message: "L2 mode (ARP/NDP) is not supported: Herald announces by BGP only. Keep MetalLB's L2 speakers for these pools, or announce them by BGP with a BGPAdvertisement" });
    else if (STATUS_KINDS.has(kind)) notes.push({ level: 'action', object: label(x), message: `${kind} is MetalLB's status, not configuration: nothing to carry (Herald reports in BGPNodeStatus and the objects' conditions)` });
    else notes.push({ level: 'refused', object: label(x), message: `MetalLB kind ${kind} is not known to this tool: left out` });
  }
  if (byKind('BGPAdvertisement').length === 0 && byKind('BGPPeer').length > 0) {
    notes.push({ level: 'refused', object: '(input)', message: 'no BGPAdvertisement: MetalLB announces nothing by BGP without one, but Herald without any advertisement announces every LoadBalancer address to every peer. Add a BGPAdvertisement that says what to announce before applying' });
  }
  if (metallb.length > 0) {
    notes.push({
      level: 'action',
      object: "(Herald's configuration file)",
      message:
        "set compatibility: {metallbAnnotations: true} so Services keep their metallb.io/ (and metallb.universe.tf/) loadBalancerIPs, address-pool and allow-shared-ip annotations; set ignoreExcludeLB: true if MetalLB's speaker ran with --ignore-exclude-lb (these objects do not say)",
    });
  }
  return { objects, notes };
}

/** The notes as lines: `not carried: BGPPeer metallb-system/a spec.vrf: message` or `note: …`. */
export function formatNotes(notes: readonly MigrationNote[]): string {
  return notes.map((n) => `${n.level === 'refused' ? 'not carried' : 'note'}: ${n.object}${n.field !== undefined ? ` ${n.field}` : ''}: ${n.message}\n`).join('');
}
