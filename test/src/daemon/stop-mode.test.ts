// The SIGTERM decision as a table (docs/decisions.md "Stop modes"): onTerm wins, then drained, then departing
// (Kubernetes only), else a restart; the reason names what decided.
import t from 'tap';
import { decideStopMode } from '../../../src/daemon/stop-mode.ts';

t.test('SIGTERM → restart or departure, and why', async (t) => {
  const drained = 'annotation herald.io/drain="maintenance" on Node n1';
  const departing = 'Node n1 has taint ToBeDeletedByClusterAutoscaler';
  const rows = [
    { onTerm: 'auto', kubernetes: true, drained: undefined, departing: undefined, mode: 'restart', why: /rolling update, pod deletion or liveness kill/ },
    { onTerm: 'auto', kubernetes: true, drained, departing: undefined, mode: 'departure', why: /drained \(annotation herald\.io\/drain/ },
    { onTerm: 'auto', kubernetes: true, drained: undefined, departing, mode: 'departure', why: /leaving service \(Node n1 has taint ToBeDeletedByClusterAutoscaler\)/ },
    { onTerm: 'auto', kubernetes: false, drained: undefined, departing, mode: 'restart', why: /standalone/ },
    { onTerm: 'auto', kubernetes: false, drained: 'file /var/lib/herald/drain.json', departing: undefined, mode: 'departure', why: /drain\.json/ },
    { onTerm: 'restart', kubernetes: true, drained, departing, mode: 'restart', why: /shutdown\.onTerm is restart/ },
    { onTerm: 'departure', kubernetes: false, drained: undefined, departing: undefined, mode: 'departure', why: /shutdown\.onTerm is departure/ },
  ] as const;
  for (const r of rows) {
    const d = decideStopMode({ onTerm: r.onTerm, kubernetes: r.kubernetes, drained: r.drained, departing: r.departing });
    const label = `onTerm ${r.onTerm}, ${r.kubernetes ? 'kubernetes' : 'standalone'}, drained ${r.drained !== undefined}, departing ${r.departing !== undefined}`;
    t.equal(d.mode, r.mode, label);
    t.match(d.why, r.why, `${label}: why`);
  }
});
