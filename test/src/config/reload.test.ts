// Reloads: an unchanged file is read and hashed, not parsed, and allocates no route objects; SIGHUP and the file
// watcher seeing one change reload once; a changed file keeps the route objects of unchanged routes; a reload whose
// routes cannot be applied is reported failed, with the cause (issue 19).
import t from 'tap';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import type { PeerConfig as SpeakerPeerConfig, PeerStatus, Route, SpeakerOptions, StopMode, StopOutcome } from '../../../bgp/index.ts';
import { ConfigFile, ConfigError, validateConfig } from '../../../src/config/load.ts';
import { Daemon } from '../../../src/daemon/daemon.ts';
import type { SpeakerLike } from '../../../src/daemon/speaker-like.ts';
import type { GateResult, HealthEvents, HealthLike } from '../../../src/health/types.ts';
import { runDaemon } from '../../../src/daemon/run.ts';
import { HeraldMetrics } from '../../../src/metrics/metrics.ts';
import { freePort } from '../../helpers/bird.ts';
import { bigConfigText } from '../../../bench/config-gen.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-reload-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('ConfigFile: an unchanged file is a no-op; a changed one reuses unchanged route objects', async (t) => {
  const file = join(dir, 'big.yaml');
  writeFileSync(file, bigConfigText(5000));
  const cf = new ConfigFile(file);
  const first = await cf.load();
  t.equal(first.routes.length, 5000);
  t.equal(cf.parses, 1);
  t.equal(await cf.reload(), undefined, 'same content: nothing to reload');
  t.equal(await cf.reload(), undefined, 'and again');
  t.equal(cf.parses, 1, 'not parsed again (no new route objects)');

  // one route changed, one added: every other route object is the one loaded before
  const text = bigConfigText(5000).replace('- prefix: 10.0.0.7/32', '- prefix: 10.0.0.7/32\n    med: 5') + '  - prefix: 10.9.9.9/32\n';
  writeFileSync(file, text);
  const next = await cf.reload();
  t.ok(next, 'changed content is loaded');
  if (!next) return;
  t.equal(next.routes.length, 5001);
  const reused = next.routes.filter((r, i) => r === first.routes[i]).length;
  t.equal(reused, 4999, 'all but the changed route are the same objects');
  t.not(next.routes[7], first.routes[7]);
  t.equal(next.routes[7]?.med, 5);

  // an invalid file: rejected once; the same content again is a no-op; forget() parses it again
  writeFileSync(file, 'bgp: {localAs: 0}\n');
  await t.rejects(cf.reload(), ConfigError);
  t.equal(await cf.reload(), undefined, 'the same invalid content is not parsed twice');
  cf.forget();
  await t.rejects(cf.reload(), ConfigError, 'after forget() it is read again');
  t.equal(cf.parses, 4);
});

t.test('herald run: SIGHUP and the file watcher seeing one change reload once', async (t) => {
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(dir, 'herald.yaml');
  const base = { bgp: { localAs: 65000, routerId: '10.0.0.1' }, admin: { address: '127.0.0.1', port: adminPort }, stateDir: join(dir, 'state'), logLevel: 'info' };
  writeFileSync(configPath, stringify({ ...base, routes: [{ prefix: '10.5.0.0/24' }] }));
  const lines: string[] = [];
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stop = resolve));
  const running = runDaemon({ configPath, env: {}, stopSignal, watchIntervalMs: 50, logStream: { write: (l) => void lines.push(l) } });
  const msgs = () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  const waitFor = async (pred: () => boolean, what: string) => {
    for (let i = 0; i < 2400 && !pred(); i++) await new Promise((r) => setTimeout(r, 25)); // up to 60 s: the Speaker thread boots slowly on a loaded machine
    if (!pred()) throw new Error(`timed out: ${what}\n${msgs().join('\n')}`);
  };
  await waitFor(() => msgs().includes('admin API listening'), 'started');
  writeFileSync(configPath, stringify({ ...base, routes: [{ prefix: '10.5.0.0/24' }, { prefix: '10.6.0.0/24' }] }));
  process.emit('SIGHUP', 'SIGHUP');
  // the watcher polls every 50 ms: it sees the new stamp too
  await waitFor(() => msgs().filter((m) => m === 'reloading configuration').length >= 2, 'SIGHUP and watcher');
  await waitFor(() => msgs().some((m) => m.startsWith('configuration unchanged')), 'second is a no-op');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(msgs().filter((m) => m === 'configuration reloaded').length, 1, 'applied once');
  t.equal(msgs().filter((m) => m.startsWith('configuration unchanged')).length, 1, 'the other trigger is a no-op');
  const status = (await (await fetch(`http://127.0.0.1:${adminPort}/api/v1/status`)).json()) as { routes: { desired: number }; lastReload?: { ok: boolean } };
  t.equal(status.routes.desired, 2);
  t.equal(status.lastReload?.ok, true);
  stop();
  t.equal(await running, 0);
});

/** A speaker whose route updates fail while `failing` is set (what a route the encoder refuses does). */
class StubSpeaker extends EventEmitter implements SpeakerLike {
  readonly localAs: number;
  failing = false;
  routes = 0;
  draining = false;
  constructor(opts: SpeakerOptions) {
    super();
    this.localAs = opts.localAs;
  }
  async listen() {}
  addPeer(_cfg: SpeakerPeerConfig) {}
  updatePeer(_cfg: SpeakerPeerConfig) {}
  async removePeer(_name: string) {}
  setRoutes(routes: readonly Route[]) {
    if (this.failing) throw new Error('2 invalid route(s): 10.6.0.0/24: next hop cannot be encoded');
    this.routes = routes.length;
  }
  updateRoutes(changed: readonly Route[], removed: readonly string[]) {
    if (this.failing) throw new Error('2 invalid route(s): 10.6.0.0/24: next hop cannot be encoded');
    this.routes += changed.length - removed.length;
  }
  markInitialSyncDone() {}
  async drain() {}
  undrain() {}
  async stop(o: { mode: StopMode }): Promise<StopOutcome> {
    return { mode: o.mode, peers: [] };
  }
  resetPeer() {}
  peers(): PeerStatus[] {
    return [];
  }
  adjRibOut() {
    return [];
  }
}

class NoHealth extends EventEmitter<HealthEvents> implements HealthLike {
  setChecks() {
    return { errors: [] };
  }
  gate(): GateResult {
    return { pass: true, reasons: [] };
  }
  setAnnounced() {}
  status() {
    return { checks: [], invalid: [] };
  }
  async close() {}
}

t.test('a reload whose routes cannot be applied is reported failed, with the cause', async (t) => {
  const cfg = (routes: object[]) => {
    const r = validateConfig({ bgp: { localAs: 65000, routerId: '10.0.0.1' }, routes });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.config;
  };
  let speaker!: StubSpeaker;
  const metrics = new HeraldMetrics({ version: 'test', defaultMetrics: false });
  const daemon = new Daemon(cfg([{ prefix: '10.5.0.0/24' }]), { nodeName: 'n', routerId: '10.0.0.1', nodeIps: [] }, {
    createSpeaker: (o) => (speaker = new StubSpeaker(o)),
    health: new NoHealth(),
    logger: pino({ level: 'silent' }),
    metrics,
    version: 'test',
    restarting: false,
    env: {},
  });
  await daemon.start();
  t.equal(speaker.routes, 1);
  daemon.reload(cfg([{ prefix: '10.5.0.0/24' }, { prefix: '10.7.0.0/24' }]));
  t.match(daemon.view.status().lastReload, { ok: true });
  speaker.failing = true;
  daemon.reload(cfg([{ prefix: '10.5.0.0/24' }, { prefix: '10.6.0.0/24' }]));
  const last = daemon.view.status().lastReload;
  t.match(last, { ok: false, errors: [/routes could not be applied.*10\.6\.0\.0\/24: next hop cannot be encoded/] }, 'failed, with the cause');
  t.equal(speaker.routes, 2, 'the previous routes stay');
  t.match(await metrics.registry.getSingleMetricAsString('herald_config_reloads_total'), /result="invalid"\} 1/);
  await daemon.shutdown('test');
});
