/**
 * A stand-in for kube-proxy's health endpoints on one demo node: `GET /healthz` on the node health port and
 * `GET /health` on a Service's healthCheckNodePort, answering like kube-proxy (200 with local endpoints, 503
 * without). The answer of each port is read from a state file on every request, so the demo flips it by writing
 * "200" or "503" to `<stateDir>/<port>`.
 *
 * Usage: node demo/kube-proxy.ts ADDRESS STATE_DIR PORT [PORT...]
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [address, stateDir, ...ports] = process.argv.slice(2);
if (!address || !stateDir || ports.length === 0) {
  process.stderr.write('usage: node demo/kube-proxy.ts ADDRESS STATE_DIR PORT [PORT...]\n');
  process.exit(2);
}

function statusOf(port: string): number {
  try {
    return Number(readFileSync(join(stateDir as string, port), 'utf8').trim()) || 200;
  } catch {
    return 200;
  }
}

for (const port of ports) {
  const server = createServer((req, res) => {
    const status = statusOf(port);
    const local = status === 200 ? 1 : 0;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ service: { namespace: 'demo', name: 'web' }, localEndpoints: local, serviceProxyHealthy: status === 200 }));
    void req;
  });
  server.listen(Number(port), address);
}
process.on('SIGTERM', () => process.exit(0));
