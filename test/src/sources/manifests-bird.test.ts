// Issue 19 against real BIRD: a manifest file of 10,000 documents (2.4 MB) dropped into the manifests directory of a
// running `herald run` with hold time 3 s. It used to block the event loop for a minute (the session died on its hold
// timer and every route was withdrawn); now it is parsed in slices: the session stays Established, the VIP stays in
// BIRD, and a later edit still acts. Then a *.yaml symlink to a FIFO: the scanner skips it and later edits still act.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Bird, bgpProtocol, birdAvailable, freePort, sinceMoved } from '../../helpers/bird.ts';
import { DaemonProcess } from '../../helpers/daemon-process.ts';
import { node, service, slice } from '../../helpers/k8s-objects.ts';
import { loopbackBlock, pathsFor, ROOT, sleep, waitHeraldUp } from '../../e2e/harness.ts';

const VIP = '198.51.100.30';
const HERALD_AS = 65000;
const BIRD_AS = 65100;
const ci = process.env['CI'] === 'true';

t.test('10,000 manifest documents and a FIFO symlink with hold time 3 s: the BGP session stays up, edits act', { skip: !birdAvailable() && !ci ? 'bird2 is not installed (scripts/setup.sh installs it)' : false, timeout: 240_000 }, async (t) => {
  const block = loopbackBlock();
  const nodeIp = `${block}1`;
  const birdIp = `${block}100`;
  const birdPort = await freePort(birdIp);
  const dir = mkdtempSync(join(tmpdir(), 'herald-manifests-bird-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const put = (name: string, text: string) => {
    writeFileSync(join(dir, `.${name}.tmp`), text);
    renameSync(join(dir, `.${name}.tmp`), join(manifests, name));
  };
  const web = (ready: boolean) => [node('node-a'), service('web', { etp: 'Local', lbIPs: [VIP] }), slice('web-1', 'web', [['10.2.0.1', 'node-a', { ready }]])].map((o) => stringify(o)).join('---\n');
  put('web.yaml', web(true));

  const bird = await Bird.start(bgpProtocol({ name: 'herald', local: birdIp, localPort: birdPort, localAs: BIRD_AS, neighbor: nodeIp, neighborPort: 179, neighborAs: HERALD_AS, passive: true, holdTimeSec: 3, families: ['ipv4'] }));
  t.teardown(() => bird.stop());
  const proc = new DaemonProcess('manifests-bird');
  t.teardown(() => proc.stop(5000));
  const adminPort = await freePort('127.0.0.1');
  const configPath = join(proc.dir, 'herald.yaml');
  writeFileSync(
    configPath,
    stringify({
      bgp: { localAs: HERALD_AS },
      allowedPrefixes: ['198.51.100.0/24', '198.18.0.0/16'],
      peers: [{ name: 'bird', address: birdIp, port: birdPort, peerAs: BIRD_AS, localAddress: nodeIp, holdTime: 3, connectRetryTime: 1, ebgpMultihop: 2, families: ['ipv4-unicast'] }],
      source: { manifests },
      flapControl: { holdDown: 0, penalty: 0 },
      admin: { address: '127.0.0.1', port: adminPort },
      stateDir: join(proc.dir, 'state'),
    }),
  );
  proc.spawn(process.execPath, [join(ROOT, 'bin', 'herald.js'), 'run', '--config', configPath, '--node-name', 'node-a', '--node-ip', nodeIp]);
  await waitHeraldUp({ proc, adminPort });
  const established = () => bird.waitFor(async () => ((await bird.protocol('herald'))?.bgpState === 'Established' ? await bird.protocol('herald') : undefined), 'Established', 60_000);
  const up = await established();
  const announced = async (want: boolean, what: string) => {
    await bird.waitFor(async () => (await pathsFor(bird, `${VIP}/32`)).length > 0 === want || undefined, what, 60_000);
    t.pass(what);
  };
  await announced(true, 'VIP announced');
  const since = up.since;

  // 10,000 Services (no endpoints: nothing new to announce) in one file, 2.4 MB
  const big = Array.from({ length: 10_000 }, (_, i) => stringify(service(`svc-${i}`, { ns: 'bulk', lbIPs: [`198.18.${(i >> 8) & 255}.${i & 255}`] }))).join('---\n');
  put('bulk.yaml', big);
  // the file is parsed and decided once the controller reports a decision for each Service (GET /api/v1/services)
  await proc.waitFor(
    async () => {
      const r = await fetch(`http://127.0.0.1:${adminPort}/api/v1/services`, { signal: AbortSignal.timeout(10_000) });
      return ((await r.json()) as unknown[]).length >= 10_001;
    },
    'a decision for each of the 10,001 Services',
    180_000,
    500,
  );
  const after = await bird.protocol('herald');
  const why = () => `BIRD: ${after?.bgpState} since ${after?.since}, last error ${after?.lastError ?? '-'}; herald log:\n${proc.stdout.split('\n').slice(-15).join('\n')}`;
  t.equal(after?.bgpState, 'Established', 'the session stayed Established', { diagnostic: after?.bgpState !== 'Established', why: after?.bgpState !== 'Established' ? why() : '' });
  t.notOk(sinceMoved(since, after?.since), `and did not flap (since ${since} → ${after?.since})`);
  t.same(await pathsFor(bird, `${VIP}/32`), ['herald'], 'the VIP stayed announced');

  // a *.yaml symlink to a FIFO: skipped, and an edit after it still acts
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  symlinkSync(join(dir, 'pipe'), join(manifests, 'pipe.yaml'));
  await sleep(1500);
  put('web.yaml', web(false));
  await announced(false, 'the endpoint went unready: VIP withdrawn (the scanner is not stuck on the FIFO)');
  put('web.yaml', web(true));
  await announced(true, 'ready again: announced');
  const last = (await bird.protocol('herald'))?.since;
  t.notOk(sinceMoved(since, last), `the session never flapped (since ${since} → ${last})`);
});
