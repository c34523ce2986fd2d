/**
 * Human output of the `herald` CLI: aligned tables (like `birdc show protocols`), durations.
 * Pure functions: the CLI snapshot tests compare their output byte for byte.
 */
import type { HealthCheckView, PeerView, RouteView, ServiceView, StatusView, VipAttributesView } from '../admin/view.ts';
import { refusedText } from '../admin/view.ts';

/**
 * Left-aligned columns separated by two spaces; trailing spaces trimmed.
 * @param headers column titles
 * @param rows cells (missing cells print empty)
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    headers
      .map((_h, i) => (cells[i] ?? '').padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** 3725 → "1h02m05s"; 59.9 → "59s"; 90061 → "1d01h01m01s". */
export function formatDuration(sec: number): string {
  let s = Math.max(0, Math.floor(sec));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const p2 = (n: number) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d${p2(h)}h${p2(m)}m${p2(s)}s`;
  if (h > 0) return `${h}h${p2(m)}m${p2(s)}s`;
  if (m > 0) return `${m}m${p2(s)}s`;
  return `${s}s`;
}

function sum(rec: Record<string, number>): number {
  return Object.values(rec).reduce((a, b) => a + b, 0);
}

/** One-line description of a peer's last error. */
export function describePeerError(p: PeerView): string {
  const e = p.lastError;
  if (!e) return '';
  const what =
    e.kind === 'notificationReceived' ? 'Received:' : e.kind === 'notificationSent' ? 'Sent:' : e.kind === 'holdTimerExpired' ? 'Hold timer expired' : e.kind === 'transportError' ? 'Socket:' : `${e.kind}:`;
  const code = e.code !== undefined ? ` ${e.description ?? `${e.code}/${e.subcode ?? 0}`}` : '';
  const msg = e.message !== undefined && e.message !== '' ? ` "${e.message}"` : '';
  return `${what}${code}${msg}`.replace(/:$/, '');
}

/** `herald peers` table. */
export function formatPeers(peers: readonly PeerView[]): string {
  return formatTable(
    ['Name', 'Address', 'AS', 'State', 'Uptime', 'Pfx sent', 'Pfx rcvd', 'Msgs sent/rcvd', 'Info'],
    peers.map((p) => [
      p.name,
      p.port === 179 ? p.address : `${p.address}:${p.port}`,
      String(p.peerAs),
      p.state,
      p.uptimeSec !== undefined ? formatDuration(p.uptimeSec) : '-',
      String(p.prefixes.sent),
      String(p.prefixes.received),
      `${sum(p.messages.sent)}/${sum(p.messages.received)}`,
      // Like birdc: the last error explains a session that is down; an Established one needs none.
      p.state === 'Established' ? '' : describePeerError(p),
    ]),
  );
}

/** `herald peers NAME`: one peer in detail, key: value lines. */
export function formatPeerDetail(p: PeerView): string {
  const rows: [string, string][] = [
    ['Name', p.name],
    ['Address', `${p.address} port ${p.port}`],
    ['AS', `local ${p.localAs}, peer ${p.peerAs} (${p.localAs === p.peerAs ? 'iBGP' : 'eBGP'})`],
    ['State', p.state + (p.since ? ` since ${p.since}` : '')],
  ];
  if (p.uptimeSec !== undefined) rows.push(['Uptime', formatDuration(p.uptimeSec)]);
  if (p.negotiated) {
    const n = p.negotiated;
    rows.push(['Hold time', `${n.holdTimeSec} s (keepalive ${n.keepaliveTimeSec} s)`]);
    rows.push(['Families', n.families.join(', ')]);
    const caps = [n.fourOctetAs && '4-octet AS', n.routeRefresh && 'route refresh', n.extendedMessage && 'extended message', n.gracefulRestart && 'graceful restart'].filter(Boolean);
    rows.push(['Capabilities', caps.join(', ') || '-']);
    if (n.peerBgpIdentifier) rows.push(['Peer router id', n.peerBgpIdentifier]);
  }
  if (p.lastError) rows.push(['Last error', describePeerError(p) + (p.lastError.at ? ` at ${p.lastError.at}` : '')]);
  if (p.bfd) {
    const b = p.bfd;
    const parts = [`${b.state}${b.multihop ? ' multihop' : ''}`, `tx ${b.transmitIntervalMs} ms, detection ${b.detectionTimeMs} ms`, `TTL check ${b.ttlCheck}`];
    if (b.lastDown) parts.push(`last down ${b.lastDown.at}: ${b.lastDown.diagnostic}`);
    if (b.ttlCheckReason) parts.push(b.ttlCheckReason);
    if (b.error) parts.push(b.error);
    const discarded = Object.values(b.discards).reduce((a, n) => a + n, 0);
    if (b.lastDiscard) parts.push(`${discarded} packet(s) discarded, last: ${b.lastDiscard.reason}: ${b.lastDiscard.message}`);
    rows.push(['BFD', parts.join('; ')]);
  }
  const fmt = (r: Record<string, number>) =>
    Object.entries(r)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '0';
  rows.push(['Messages sent', fmt(p.messages.sent)]);
  rows.push(['Messages rcvd', fmt(p.messages.received)]);
  rows.push(['Prefixes', `${p.prefixes.sent} sent, ${p.prefixes.received} received`]);
  rows.push(['Flaps', String(p.flaps)]);
  const w = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(w)} ${v}`).join('\n') + '\n';
}

/** `herald routes` table. */
export function formatRoutes(routes: readonly RouteView[]): string {
  if (routes.length === 0) return 'No routes.\n';
  return formatTable(
    ['Peer', 'Prefix', 'Next hop', 'AS path', 'LocPref', 'MED', 'Communities'],
    routes.map((r) => [
      r.peer,
      r.prefix,
      r.nextHop ?? '-',
      r.asPath && r.asPath.length > 0 ? r.asPath.join(' ') : '-',
      r.localPref !== undefined ? String(r.localPref) : '-',
      r.med !== undefined ? String(r.med) : '-',
      [...(r.communities ?? []), ...(r.largeCommunities ?? []), ...(r.extendedCommunities ?? [])].join(' ') || '-',
    ]),
  );
}

/** Short form of one advertisement's steering: "chosen 1/2 of 5, weight 3/10, MED 100, prepend 2". */
export function formatSteering(a: VipAttributesView): string {
  const out: string[] = [];
  if (a.choice) out.push(a.announced ? `chosen ${a.choice.nodes.length}/${a.choice.maxNodes} of ${a.choice.eligible}` : `not chosen (${a.choice.nodes.length} of ${a.choice.eligible})`);
  if (a.linkBandwidth !== undefined && a.endpoints) out.push(`weight ${a.endpoints.local}/${a.endpoints.total}`);
  if (a.locality) out.push(a.locality);
  if (a.med !== undefined) out.push(`MED ${a.med}`);
  if (a.asPathPrepend !== undefined) out.push(`prepend ${a.asPathPrepend}`);
  if (a.heldUntil !== undefined) out.push(`held until ${a.heldUntil}`);
  return out.join(', ');
}

/** The Steering cell of one VIP: each advertisement's short form, named when there are several. */
function steeringCell(list: readonly VipAttributesView[] | undefined): string {
  if (!list || list.length === 0) return '-';
  if (list.length === 1) return formatSteering(list[0] as VipAttributesView) || '-';
  return list.map((a) => `${a.advertisement}: ${formatSteering(a) || '-'}`).join('; ');
}

/** `herald services` table: one line per VIP; a Steering column when weighting, locality, maxNodesPerVip or annotations apply. */
export function formatServices(services: readonly ServiceView[]): string {
  if (services.length === 0) return 'No Services.\n';
  const steering = services.some((s) => s.vips.some((v) => v.attributes !== undefined && v.attributes.length > 0));
  const rows: string[][] = [];
  for (const s of services) {
    if (s.vips.length === 0) rows.push([s.service, '-', '-', 'no', ...(steering ? ['-'] : []), s.reasons.map((r) => r.code).join(', ')]);
    for (const v of s.vips) rows.push([s.service, v.address, v.kind, v.announced ? 'yes' : 'no', ...(steering ? [steeringCell(v.attributes)] : []), v.reasons.map((r) => r.code).join(', ')]);
  }
  return formatTable(['Service', 'VIP', 'Kind', 'Announced', ...(steering ? ['Steering'] : []), 'Reasons'], rows);
}

/** One advertisement's attributes in full, for `herald services NS/NAME`. */
function describeSteering(a: VipAttributesView): string {
  const out: string[] = [];
  if (a.choice) out.push(`${a.announced ? 'chosen' : 'not chosen'}: maxNodesPerVip ${a.choice.maxNodes} of ${a.choice.eligible} eligible (${a.choice.nodes.join(', ') || 'none'})`);
  if (a.linkBandwidth !== undefined) out.push(`link bandwidth ${a.linkBandwidth} bytes/s${a.endpoints ? ` (${a.endpoints.local} of ${a.endpoints.total} endpoints)` : ''}`);
  else if (a.endpoints) out.push(`${a.endpoints.local} of ${a.endpoints.total} endpoints local`);
  if (a.locality) out.push(a.locality);
  if (a.med !== undefined) out.push(`MED ${a.med}`);
  if (a.asPathPrepend !== undefined) out.push(`AS path prepend ${a.asPathPrepend} (eBGP)`);
  if (a.communities) out.push(`communities ${a.communities.join(' ')}`);
  if (a.largeCommunities) out.push(`large communities ${a.largeCommunities.join(' ')}`);
  if (a.heldUntil !== undefined) out.push(`held by attributeChangeInterval until ${a.heldUntil} (the peers have the previous attributes)`);
  for (const w of a.withheld ?? []) out.push(`withheld: ${w}`);
  return `${a.advertisement} → ${a.prefix}: ${out.join('; ') || 'no attributes'}`;
}

/** `herald services NS/NAME`: the full reason chain of every VIP. */
export function formatServiceDetail(s: ServiceView): string {
  const out = [`Service ${s.service}`];
  for (const r of s.reasons) out.push(`  note: ${r.code}: ${r.message}`);
  for (const v of s.vips) {
    out.push(`  ${v.address} (${v.kind}): ${v.announced ? 'announced' : 'NOT announced'}`);
    for (const r of v.reasons) out.push(`    - ${r.code}: ${r.message}`);
    for (const a of v.attributes ?? []) out.push(`    = ${describeSteering(a)}`);
  }
  if (s.vips.length === 0) out.push('  no VIPs');
  return out.join('\n') + '\n';
}

/** `herald status`. */
export function formatStatus(s: StatusView): string {
  const rows: [string, string][] = [
    ['Herald', `${s.version} on node ${s.node}`],
    ['Router id', `${s.routerId}, AS ${s.localAs}`],
    ['Started', `${s.startedAt} (up ${formatDuration(s.uptimeSec)})`],
    ['Ready', s.ready ? 'yes' : `no (${s.notReady.join('; ')})`],
    ['Drained', s.drain.length > 0 ? `yes (${s.drain.join('; ')})` : s.drained ? 'yes' : 'no'],
    ['Peers', `${s.peers.established}/${s.peers.configured} established`],
    ['Routes', `${s.routes.desired} desired`],
  ];
  for (const f of s.forbidden ?? []) rows.push(['Forbidden', f]);
  for (const q of s.quarantined ?? []) rows.push(['Quarantined', `${q.kind} ${q.name} since ${q.since}: ${q.reason}`]);
  for (const r of s.refused ?? []) rows.push(['Refused', refusedText(r)]);
  if (s.lastReload) rows.push(['Last reload', `${s.lastReload.at} ${s.lastReload.ok ? 'ok' : `failed: ${(s.lastReload.errors ?? []).join('; ')}`}`]);
  const w = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(w)} ${v}`).join('\n') + '\n';
}

/** `herald health` table: one line per check. */
export function formatHealth(checks: readonly HealthCheckView[]): string {
  if (checks.length === 0) return 'No health checks.\n';
  return formatTable(
    ['Gate', 'Kind', 'Target', 'State', 'Ok/Fail', 'Last failure'],
    checks.map((c) => [
      c.gate === '' ? '(node)' : c.gate,
      c.kind,
      c.target,
      c.state,
      c.consecutiveOk !== undefined ? `${c.consecutiveOk}/${c.consecutiveFail ?? 0}` : '-',
      c.lastFailure ? `${c.lastFailure.code}: ${c.lastFailure.message}` : '',
    ]),
  );
}
