/**
 * bgp/main-thread.ts, the entry src/ reaches bgp/ through: every name it exports is bgp/index.ts's too (the same
 * binding), and importing it loads none of what runs in the speaker thread (the Speaker, sessions, FSM, RIB, BFD) nor
 * the codec's message decoders, so that the daemon's main thread does not hold them (docs/architecture.md "Threads").
 */
import t from 'tap';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as entry from '../../bgp/main-thread.ts';
import * as bgp from '../../bgp/index.ts';
import { moduleLoads } from '../helpers/module-loads.ts';

const root = new URL('../../', import.meta.url).pathname;

t.test('every name of bgp/main-thread.ts is the same binding in bgp/index.ts', async (t) => {
  const names = Object.keys(entry);
  t.ok(names.length >= 20, `bgp/main-thread.ts exports ${names.length} values`);
  for (const n of ['SpeakerProxy', 'SpeakerThread', 'realClock', 'parseCommunity', 'canonicalPrefix', 'describeNotification']) t.ok(names.includes(n), `${n} is exported`);
  const all: Record<string, unknown> = bgp;
  const main: Record<string, unknown> = entry;
  t.same(names.filter((n) => all[n] !== main[n]), [], 'each is exported by bgp/index.ts, the same value');
});

t.test('importing bgp/main-thread.ts loads nothing of the speaker thread', async (t) => {
  const r = moduleLoads(`await import(${JSON.stringify(pathToFileURL(join(root, 'bgp/main-thread.ts')).href)});\n`);
  t.equal(r.status, 0, r.stderr.slice(-2000));
  const prefix = pathToFileURL(join(root, 'bgp')).href + '/';
  const loaded = r.main.filter((u) => u.startsWith(prefix)).map((u) => u.slice(prefix.length));
  t.ok(loaded.includes('main-thread.ts') && loaded.includes('speaker-thread/proxy.ts') && loaded.includes('clock.ts'), `the entry's own modules were seen (${loaded.length})`);
  const heavy = loaded.filter((m) => m === 'speaker.ts' || /^(session|fsm\/fsm|rib\/(adj-rib-out|export|packer|record)|bfd)\b/.test(m) || /^codec\/(message|update|open|attributes|build)\.ts$/.test(m));
  t.same(heavy, [], 'no Speaker, session, FSM, RIB, BFD or message codec module');
});
