// BFD from the file to the operator: the config field (MetalLB BFDProfile names, ms; defaults and ranges of
// bgp/peer-config.ts BFD_OPTIONS, src/config/peer-fields.ts BFD_FIELDS), its cross-field rule, its mapping to the
// Speaker (bgp/ names), the admin view, the metrics and `herald peers NAME`.
import t from 'tap';
import { validateConfig } from '../../../src/config/load.ts';
import type { Config } from '../../../src/config/schema.ts';
import { peerView } from '../../../src/admin/peer-view.ts';
import { toSpeakerPeer } from '../../../src/config/peer-fields.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { formatPeerDetail } from '../../../src/cli/table.ts';
import type { PeerStatus } from '../../../bgp/speaker.ts';

const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' } };

function cfg(peer: object): Config {
  const r = validateConfig({ ...base, peers: [{ name: 'r1', address: '192.0.2.1', peerAs: 65001, ...peer }] });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

function errors(peer: object): string[] {
  const r = validateConfig({ ...base, peers: [{ name: 'r1', address: '192.0.2.1', peerAs: 65001, ...peer }] });
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
}

t.test('defaults 300/300/3, not passive; enabled: false maps to no BFD', async (t) => {
  const c = cfg({ bfd: { enabled: true } });
  t.same(c.peers[0]?.bfd, { enabled: true, transmitInterval: 300, receiveInterval: 300, detectMultiplier: 3, passive: false });
  t.same(toSpeakerPeer(c.peers[0]!, undefined).bfd, { transmitIntervalMs: 300, receiveIntervalMs: 300, detectMultiplier: 3, passive: false });
  t.equal(toSpeakerPeer(cfg({ bfd: { transmitInterval: 100 } }).peers[0]!, undefined).bfd, undefined, 'enabled defaults to false');
  t.equal(toSpeakerPeer(cfg({}).peers[0]!, undefined).bfd, undefined);
  const full = cfg({ ebgpMultihop: 3, bfd: { enabled: true, transmitInterval: 100, receiveInterval: 50, detectMultiplier: 5, passive: true, multihop: true, minimumTtl: 250 } });
  t.same(toSpeakerPeer(full.peers[0]!, undefined).bfd, { transmitIntervalMs: 100, receiveIntervalMs: 50, detectMultiplier: 5, passive: true, multihop: true, minimumTtl: 250 });
});

t.test('bad values name the field and the fix', async (t) => {
  t.same(errors({ bfd: { enabled: true, transmitInterval: 5 } }), ['peers[0].bfd.transmitInterval: must be an integer number of milliseconds 10..60000']);
  t.same(errors({ bfd: { enabled: true, detectMultiplier: 1 } }), ['peers[0].bfd.detectMultiplier: must be an integer 2..255']);
  t.same(errors({ bfd: { enabled: true, echoMode: true } }), ['peers[0].bfd.echoMode: unknown field']);
  t.same(errors({ bfd: { enabled: true, minimumTtl: 254 } }), ['peers[0].bfd.minimumTtl: applies to multihop BFD only (single-hop always requires TTL 255); set bfd.multihop or remove it']);
  t.same(errors({ ebgpMultihop: 2, bfd: { enabled: true, minimumTtl: 254 } }), [], 'ebgpMultihop 2 makes BFD multihop');
});

const status = (bfd: PeerStatus['bfd']): PeerStatus => ({
  name: 'r1', address: '192.0.2.1', port: 179, peerAs: 65001, localAs: 65000, bgpIdentifier: '192.0.2.254', state: 'Idle', uptimeSec: undefined, negotiated: undefined,
  lastReason: { kind: 'notificationSent', code: 6, subcode: 10 }, lastNotificationSent: undefined, lastNotificationReceived: undefined,
  messagesSent: {}, messagesReceived: {}, prefixesAdvertised: 0, prefixesReceived: 0, endOfRibReceived: [], endOfRibSent: [], gracefulShutdown: false,
  ...(bfd ? { bfd } : {}),
});

t.test('N10: two peers at one address with BFD on the same nodes are refused by config check (issue 35)', async (t) => {
  const two = (a: object, b: object): string[] => {
    const r = validateConfig({ ...base, peers: [{ name: 'r1', address: '192.0.2.1', peerAs: 65001, ...a }, { name: 'r2', address: '192.0.2.1', port: 1179, peerAs: 65001, ...b }] });
    return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
  };
  t.same(two({ bfd: { enabled: true } }, { bfd: { enabled: true } }), [
    'peers[1].bfd.enabled: a second single-hop BFD session to 192.0.2.1 (also peers[0]) on the same nodes: one BFD session runs per address and hop mode (RFC 5880 §6.8.6 finds it by source address); enable BFD on one of them',
  ]);
  t.same(two({ bfd: { enabled: true } }, { address: '192.0.2.1', bfd: { enabled: false } }), [], 'BFD on one of them');
  t.same(two({ bfd: { enabled: true } }, { ebgpMultihop: 2, bfd: { enabled: true } }), [], 'one single-hop, one multihop: two sessions');
  t.same(two({ bfd: { enabled: true }, nodeSelector: { matchLabels: { rack: 'a' } } }, { bfd: { enabled: true }, nodeSelector: { matchLabels: { rack: 'b' } } }), [], 'on other nodes');
});

t.test('admin view, metrics and CLI show BFD, and the BGP reason says BFD Down', async (t) => {
  const v = peerView(
    status({
      state: 'Down', remoteState: 'Down', diagnostic: 'Control Detection Time Expired', multihop: false, localDiscriminator: 7, remoteDiscriminator: 0,
      transmitIntervalMs: 1000, detectionTimeMs: 0, ttlCheck: 'kernel', stateChanges: 4,
      discards: { authentication: 12 }, lastDiscard: { reason: 'authentication', message: 'Authentication (A bit) is not supported: configure the peer without BFD authentication' },
      lastDown: { at: Date.UTC(2030, 0, 1), diagnostic: 'Control Detection Time Expired', remoteState: 'Down', detectionTimeMs: 900 },
    }),
    undefined,
  );
  t.equal(v.lastError?.description, 'Cease / BFD Down', 'the BGP session was reset by BFD (RFC 9384 subcode 10)');
  t.same(v.bfd?.lastDown, { at: '2030-01-01T00:00:00.000Z', diagnostic: 'Control Detection Time Expired', remoteState: 'Down', detectionTimeMs: 900 });
  t.equal(v.bfd?.state, 'Down');
  t.equal(peerView(status(undefined), undefined).bfd, undefined, 'no BFD, no bfd field');
  t.match(formatPeerDetail(v), /BFD: +Down; tx 1000 ms, detection 0 ms; TTL check kernel; last down 2030-01-01T00:00:00.000Z: Control Detection Time Expired/);
  // issue 35: a router with BFD authentication is not only "Control Detection Time Expired"
  t.same(v.bfd?.discards, { authentication: 12 });
  t.match(formatPeerDetail(v), /12 packet\(s\) discarded, last: authentication: Authentication \(A bit\) is not supported: configure the peer without BFD authentication/);

  const m = new HeraldMetrics({ version: 'test', defaultMetrics: false });
  const up = peerView(status({ state: 'Up', remoteState: 'Up', diagnostic: 'No Diagnostic', multihop: true, localDiscriminator: 7, remoteDiscriminator: 9, transmitIntervalMs: 300, detectionTimeMs: 900, ttlCheck: 'none', discards: { remoteDiscriminator: 3 }, stateChanges: 2 }), undefined);
  m.setPeersProvider(() => [up, { ...peerView(status(undefined), undefined), name: 'plain' }]);
  m.observeBfdStateChange('r1', 'Up', 'Down');
  const text = (await m.text()).body;
  t.match(text, /herald_bfd_session_up\{peer="r1"\} 1/);
  t.match(text, /herald_bfd_detection_time_seconds\{peer="r1"\} 0\.9/);
  t.match(text, /herald_bfd_session_state_changes_total\{peer="r1",from="Up",to="Down"\} 1/);
  t.match(text, /herald_bfd_packets_discarded_total\{peer="r1",reason="remoteDiscriminator"\} 3/, 'discards by reason (issue 35)');
  t.notMatch(text, /herald_bfd_session_up\{peer="plain"\}/, 'peers without BFD have no BFD series');
});
