// A scripted DaemonView for admin API and CLI tests: fixed data, records every action.
import type { DaemonView, HealthCheckView, PeerView, RouteView, ServiceView, StatusView } from '../../../src/admin/view.ts';
import { NotFoundError } from '../../../src/admin/view.ts';

export const PEERS: PeerView[] = [
  {
    name: 'tor-a',
    address: '192.0.2.1',
    port: 179,
    localAs: 64512,
    peerAs: 64500,
    state: 'Established',
    uptimeSec: 3725,
    since: '2026-11-29T18:00:00.000Z',
    negotiated: { holdTimeSec: 90, keepaliveTimeSec: 30, families: ['ipv4-unicast'], fourOctetAs: true, extendedMessage: false, routeRefresh: true, gracefulRestart: false, peerBgpIdentifier: '192.0.2.1' },
    messages: { sent: { open: 1, update: 3, keepalive: 120 }, received: { open: 1, keepalive: 121 } },
    prefixes: { sent: 2, received: 0 },
    flaps: 1,
  },
  {
    name: 'tor-b',
    address: '192.0.2.2',
    port: 1179,
    localAs: 64512,
    peerAs: 64501,
    state: 'Active',
    since: '2026-11-29T18:59:00.000Z',
    lastError: { kind: 'notificationReceived', code: 6, subcode: 2, description: 'Cease / Administrative Shutdown', message: 'maintenance', at: '2026-11-29T18:59:00.000Z' },
    messages: { sent: { open: 3 }, received: { notification: 1 } },
    prefixes: { sent: 0, received: 0 },
    flaps: 4,
  },
];

export const ROUTES: RouteView[] = [
  { peer: 'tor-a', prefix: '198.51.100.10/32', family: 'ipv4-unicast', nextHop: '192.0.2.10', origin: 'igp', asPath: [64512], communities: ['64512:100'], med: 10 },
  { peer: 'tor-a', prefix: '198.51.100.20/32', family: 'ipv4-unicast', nextHop: '192.0.2.10', origin: 'igp', asPath: [64512], largeCommunities: ['64512:1:2'] },
  { peer: 'tor-a', prefix: '198.51.100.40/32', family: 'ipv4-unicast', nextHop: '192.0.2.10', origin: 'igp', asPath: [64512, 64512], communities: ['64512:7'], extendedCommunities: ['lb:64512:375000000'] },
];

export const SERVICES: ServiceView[] = [
  { service: 'default/web', vips: [{ address: '198.51.100.10', kind: 'loadBalancer', announced: true, reasons: [{ code: 'LocalReadyEndpoint', message: 'a ready endpoint runs on this node' }] }], reasons: [] },
  {
    service: 'shop/cart',
    vips: [{ address: '198.51.100.30', kind: 'loadBalancer', announced: false, reasons: [{ code: 'NoLocalReadyEndpoint', message: 'externalTrafficPolicy Local and no ready endpoint on this node' }] }],
    reasons: [],
  },
  {
    service: 'shop/steered',
    vips: [
      {
        address: '198.51.100.40',
        kind: 'loadBalancer',
        announced: true,
        reasons: [
          { code: 'LocalReadyEndpoint', message: 'externalTrafficPolicy is Local; 3 ready IPv4 endpoint(s) on node node-a' },
          { code: 'Chosen', message: 'among the 2 node(s) chosen for this VIP (maxNodesPerVip 2 of 5 eligible node(s), advertisement lb: node-c, node-a)' },
          { code: 'Weighted', message: 'weight 3 of 10 endpoints: link bandwidth 375000000 bytes/s (3 × 125000000), advertisement lb' },
        ],
        attributes: [{ advertisement: 'lb', prefix: '198.51.100.40/32', announced: true, linkBandwidth: 375000000, endpoints: { local: 3, total: 10 }, choice: { maxNodes: 2, eligible: 5, nodes: ['node-c', 'node-a'] }, communities: ['64512:7'], asPathPrepend: 1 }],
      },
      {
        address: '198.51.100.41',
        kind: 'loadBalancer',
        announced: false,
        reasons: [{ code: 'NotChosen', message: 'not among the 2 node(s) chosen for this VIP (maxNodesPerVip 2 of 5 eligible node(s), advertisement lb: node-b, node-e)' }],
        attributes: [{ advertisement: 'lb', prefix: '198.51.100.41/32', announced: false, choice: { maxNodes: 2, eligible: 5, nodes: ['node-b', 'node-e'] } }],
      },
    ],
    reasons: [],
  },
];

export const HEALTH: HealthCheckView[] = [
  { key: 'kube-proxy-node', gate: '', scope: 'node', kind: 'kube-proxy-node', target: '192.0.2.10:10256/healthz', state: 'up', since: '2026-11-29T17:00:05.000Z', intervalSec: 5, rise: 2, fall: 3, consecutiveOk: 1440, consecutiveFail: 0, latencyMs: 1.2 },
  {
    key: 'route:route:198.51.100.20/32',
    gate: 'route:198.51.100.20/32',
    scope: 'gate',
    kind: 'http',
    target: '127.0.0.1:8080/healthz',
    state: 'down',
    since: '2026-11-29T18:58:00.000Z',
    intervalSec: 5,
    rise: 2,
    fall: 3,
    consecutiveOk: 0,
    consecutiveFail: 7,
    latencyMs: 0.4,
    lastFailure: { code: 'ConnectionRefused', message: 'connection refused' },
  },
  { key: 'annotation:svc:shop/cart 198.51.100.30', gate: 'svc:shop/cart 198.51.100.30', scope: 'gate', kind: '-', target: '-', state: 'invalid', lastFailure: { code: 'InvalidCheck', message: 'herald.io/health-check-port="80x": must be an integer 1-65535' } },
];

export class FakeView implements DaemonView {
  actions: string[] = [];
  ready = true;
  drained = false;
  refused: StatusView['refused'];
  status(): StatusView {
    return {
      version: '0.1.0',
      node: 'node-a',
      routerId: '192.0.2.10',
      localAs: 64512,
      startedAt: '2026-11-29T17:00:00.000Z',
      uptimeSec: 7200,
      ready: this.ready,
      notReady: this.ready ? [] : ['kubernetes source not synced'],
      drained: this.drained,
      drain: this.drained ? ['annotation herald.io/drain="maintenance" on Node node-a'] : [],
      peers: { configured: 2, established: 1 },
      routes: { desired: 2 },
      ...(this.refused ? { refused: this.refused } : {}),
    };
  }
  live(): boolean {
    return true;
  }
  peers(): PeerView[] {
    return PEERS;
  }
  async routes(f: { peer?: string; prefix?: string }): Promise<RouteView[]> {
    return ROUTES.filter((r) => (f.peer === undefined || r.peer === f.peer) && (f.prefix === undefined || r.prefix === f.prefix));
  }
  services(): ServiceView[] {
    return SERVICES;
  }
  health(): HealthCheckView[] {
    return HEALTH;
  }
  async resetPeer(name: string, soft: boolean): Promise<void> {
    if (!PEERS.some((p) => p.name === name)) throw new NotFoundError(`no peer named "${name}"`);
    this.actions.push(`reset ${name} ${soft ? 'soft' : 'hard'}`);
  }
  async drain(o?: { reason?: string }): Promise<string> {
    this.drained = true;
    this.actions.push(o?.reason !== undefined ? `drain ${o.reason}` : 'drain');
    return `drain requested: annotation herald.io/drain=${JSON.stringify(o?.reason ?? 'herald drain')} set on Node node-a`;
  }
  async undrain(): Promise<string> {
    this.drained = false;
    this.actions.push('undrain');
    return 'undrained';
  }
  async metrics(): Promise<{ contentType: string; body: string }> {
    return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '# HELP herald_up x\n# TYPE herald_up gauge\nherald_up 1\n' };
  }
}
