/**
 * A real Kubernetes control plane on loopback for the control-plane tier (test/control-plane/): etcd,
 * kube-apiserver (`--authorization-mode=RBAC`, audit log) and kube-controller-manager running only the controllers
 * the tests need (`endpointslice`, and `serviceaccount` so that Pods pass the ServiceAccount admission plugin). The
 * binaries come from `scripts/control-plane.sh build` (pinned versions, built from the Go module proxy into the tools
 * cache); certificates are made at start with the `openssl` CLI: a CA, the apiserver's serving certificate, an admin
 * client certificate (group system:masters) and the ServiceAccount signing key.
 *
 * Every process is started through `setpriv --pdeathsig KILL` (it dies with the test process even on SIGKILL) and
 * tracked by PID in a DaemonProcess (SIGTERM, then SIGKILL; process-exit hook). Every wait is bounded.
 *
 * Addresses: one loopback address for the control plane (default 127.0.0.1), random free ports. etcd runs without
 * TLS (loopback only); the apiserver serves TLS with client-certificate and bearer-token (ServiceAccount) authn.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { freePort } from './bird.ts';
import { DaemonProcess, sleep } from './daemon-process.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'control-plane.sh');

/** Paths and versions of the built binaries (`scripts/control-plane.sh paths`). */
export interface ControlPlaneTools {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  k8sVersion: string;
  etcdVersion: string;
}

/**
 * The built binaries, or why the tier cannot run here (Go missing, binaries not built, no openssl/setpriv).
 * Never builds: `.ci/run` and `npm run test:control-plane` run `scripts/control-plane.sh build` first.
 */
export function controlPlaneTools(): { tools: ControlPlaneTools } | { reason: string } {
  for (const cmd of ['openssl', 'setpriv']) {
    if (spawnSync('which', [cmd], { stdio: 'ignore' }).status !== 0) return { reason: `${cmd} is not installed` };
  }
  const r = spawnSync('bash', [SCRIPT, 'paths'], { encoding: 'utf8', timeout: 20_000 });
  const kv = Object.fromEntries(
    (r.stdout ?? '')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  if (r.status !== 0) return { reason: kv['reason'] ?? `scripts/control-plane.sh paths failed: ${r.stderr}` };
  return {
    tools: {
      etcd: kv['etcd']!,
      kubeApiserver: kv['kube-apiserver']!,
      kubeControllerManager: kv['kube-controller-manager']!,
      k8sVersion: kv['k8s-version']!,
      etcdVersion: kv['etcd-version']!,
    },
  };
}

/** An HTTP answer of the apiserver: status code and parsed JSON body (text when not JSON). */
export interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The response's headers (e.g. API Priority and Fairness's X-Kubernetes-PF-FlowSchema-UID). */
  headers?: Record<string, string | string[] | undefined>;
}

/** Thrown by {@link KubeRest.must} for an unexpected status: carries the code and the apiserver's Status message. */
export class ApiError extends Error {
  readonly code: number;
  constructor(method: string, path: string, answer: ApiAnswer) {
    super(`${method} ${path}: HTTP ${answer.status}: ${typeof answer.body === 'object' ? (answer.body?.message ?? JSON.stringify(answer.body)) : String(answer.body)}`);
    this.code = answer.status;
  }
}

/** Credentials of a {@link KubeRest} client: a client certificate or a bearer token. */
export type KubeAuth = { cert: string; key: string } | { token: string };

/** A minimal JSON REST client for the real apiserver (TLS verified against the test CA). */
export class KubeRest {
  readonly server: string;
  readonly #ca: string;
  readonly #auth: KubeAuth;

  constructor(server: string, ca: string, auth: KubeAuth) {
    this.server = server;
    this.#ca = ca;
    this.#auth = auth;
  }

  /**
   * One request. `body` is sent as JSON with `contentType` (default application/json; use
   * application/merge-patch+json or application/strategic-merge-patch+json for PATCH). Never throws for an HTTP
   * status; rejects on a connection error or after `timeoutMs` (default 15 s). `accept` asks for another
   * representation, e.g. `application/json;as=Table;v=v1;g=meta.k8s.io` (the server-side printing `kubectl get` shows).
   */
  request(method: string, path: string, body?: unknown, contentType = 'application/json', timeoutMs = 15_000, accept = 'application/json'): Promise<ApiAnswer> {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: accept };
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      // Node frames no body of a DELETE unless told its length (no chunked encoding for DELETE): the body would be
      // read as the next request on the kept-alive connection.
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    if ('token' in this.#auth) headers['Authorization'] = `Bearer ${this.#auth.token}`;
    const tls = 'cert' in this.#auth ? { cert: this.#auth.cert, key: this.#auth.key } : {};
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method, headers, ca: this.#ca, ...tls, timeout: timeoutMs }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            // not JSON (e.g. /readyz answers "ok")
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like {@link request}, but throws an {@link ApiError} unless the status is 2xx (or one of `allow`). */
  async must(method: string, path: string, body?: unknown, contentType?: string, allow: number[] = []): Promise<ApiAnswer> {
    const a = await this.request(method, path, body, contentType);
    if ((a.status < 200 || a.status > 299) && !allow.includes(a.status)) throw new ApiError(method, path, a);
    return a;
  }
}

/** One audit event of the apiserver's log (audit.k8s.io/v1 Event, the fields the tests read). */
export interface AuditEvent {
  /** One per request, the same in each of its stages' events. */
  auditID: string;
  stage: string;
  /** RFC 3339 with µs. */
  stageTimestamp: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[]; extra?: Record<string, string[]> };
  /** The client's User-Agent (Herald's: `herald/<version> (<role>)`). */
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number; reason?: string; message?: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  requestObject?: any;
}

/** The collection path of a kind as apply() creates it (the kinds of deploy/kubernetes and the tests). */
const KIND_PATHS: Record<string, { prefix: string; plural: string; namespaced: boolean }> = {
  Namespace: { prefix: '/api/v1', plural: 'namespaces', namespaced: false },
  ServiceAccount: { prefix: '/api/v1', plural: 'serviceaccounts', namespaced: true },
  Service: { prefix: '/api/v1', plural: 'services', namespaced: true },
  Node: { prefix: '/api/v1', plural: 'nodes', namespaced: false },
  Pod: { prefix: '/api/v1', plural: 'pods', namespaced: true },
  ConfigMap: { prefix: '/api/v1', plural: 'configmaps', namespaced: true },
  ClusterRole: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'clusterrolebindings', namespaced: false },
  Role: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'roles', namespaced: true },
  RoleBinding: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'rolebindings', namespaced: true },
  ValidatingAdmissionPolicy: { prefix: '/apis/admissionregistration.k8s.io/v1', plural: 'validatingadmissionpolicies', namespaced: false },
  ValidatingAdmissionPolicyBinding: { prefix: '/apis/admissionregistration.k8s.io/v1', plural: 'validatingadmissionpolicybindings', namespaced: false },
  FlowSchema: { prefix: '/apis/flowcontrol.apiserver.k8s.io/v1', plural: 'flowschemas', namespaced: false },
  PriorityLevelConfiguration: { prefix: '/apis/flowcontrol.apiserver.k8s.io/v1', plural: 'prioritylevelconfigurations', namespaced: false },
};

/** The object path (`name` given) or collection path of a manifest's kind. @throws for a kind not in KIND_PATHS. */
export function kindPath(kind: string, namespace?: string, name?: string): string {
  const k = KIND_PATHS[kind];
  if (!k) throw new Error(`control-plane harness: no path known for kind ${kind}`);
  const ns = k.namespaced ? `/namespaces/${namespace ?? 'default'}` : '';
  return `${k.prefix}${ns}/${k.plural}${name !== undefined ? `/${name}` : ''}`;
}

/** The documents of a YAML file of the repository (e.g. deploy/kubernetes/rbac.yaml), as plain objects. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function readManifests(relPath: string): any[] {
  return parseAllDocuments(readFileSync(join(ROOT, relPath), 'utf8'))
    .map((d) => d.toJS())
    .filter((o) => o !== null && typeof o === 'object');
}

/** Options of {@link ControlPlane.start}. */
export interface ControlPlaneOptions {
  /** Loopback address of etcd and the apiserver (default 127.0.0.1). */
  host?: string;
  /** kube-controller-manager controllers (default endpointslice, serviceaccount). */
  controllers?: string[];
  /** Bound of each start-up stage, ms (default 90 s: a loaded 2-core machine). */
  stageTimeoutMs?: number;
}

interface Proc {
  proc: DaemonProcess;
  log: string;
}

/** A running etcd + kube-apiserver + kube-controller-manager. Stop with {@link stop} (also on failure: t.teardown). */
export class ControlPlane {
  readonly tools: ControlPlaneTools;
  readonly host: string;
  readonly dir: string;
  /** https://HOST:PORT of the apiserver. */
  readonly server: string;
  /** The CA certificate (PEM) that signed the serving certificate. */
  readonly ca: string;
  /** A client with the admin certificate (system:masters): what `kubectl` as cluster-admin does. */
  readonly admin: KubeRest;
  readonly etcdUrl: string;
  readonly #apiserverPort: number;
  readonly #stageTimeoutMs: number;
  readonly #controllers: string[];
  #etcd: Proc | undefined;
  #apiserver: Proc | undefined;
  #kcm: Proc | undefined;

  private constructor(tools: ControlPlaneTools, o: ControlPlaneOptions, dir: string, ports: { etcd: number; peer: number; apiserver: number }) {
    this.tools = tools;
    this.host = o.host ?? '127.0.0.1';
    this.dir = dir;
    this.#stageTimeoutMs = o.stageTimeoutMs ?? 90_000;
    this.#controllers = o.controllers ?? ['endpointslice', 'serviceaccount'];
    this.#apiserverPort = ports.apiserver;
    this.server = `https://${this.host}:${ports.apiserver}`;
    this.etcdUrl = `http://${this.host}:${ports.etcd}`;
    makeCertificates(dir, this.host);
    this.ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    this.admin = new KubeRest(this.server, this.ca, { cert: readFileSync(join(dir, 'admin.crt'), 'utf8'), key: readFileSync(join(dir, 'admin.key'), 'utf8') });
    this.#peerPort = ports.peer;
  }

  readonly #peerPort: number;

  /**
   * Makes the certificates and starts etcd, kube-apiserver (ready: /readyz 200) and kube-controller-manager (ready:
   * its EndpointSlice controller has synced its caches). Throws with the logs' tails on failure, after stopping
   * whatever it started.
   */
  static async start(tools: ControlPlaneTools, o: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const host = o.host ?? '127.0.0.1';
    const dir = mkdtempSync(join(tmpdir(), 'herald-control-plane-'));
    const ports = { etcd: await freePort(host), peer: await freePort(host), apiserver: await freePort(host) };
    const cp = new ControlPlane(tools, o, dir, ports);
    try {
      await cp.#startEtcd();
      await cp.startApiserver();
      await cp.#startControllerManager();
    } catch (err) {
      const logs = cp.logs();
      await cp.stop();
      throw new Error(`${(err as Error).message}\n${logs}`, { cause: err });
    }
    return cp;
  }

  #spawn(name: string, cmd: string, args: string[]): Proc {
    const proc = new DaemonProcess(`cp-${name}`);
    const log = join(this.dir, `${name}.log`);
    appendFileSync(log, `--- ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
    const fd = openSync(log, 'a');
    try {
      proc.spawn('setpriv', ['--pdeathsig', 'KILL', '--', cmd, ...args], { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    return { proc, log };
  }

  async #waitFor<T>(p: Proc, what: string, check: () => Promise<T | undefined | false>, timeoutMs = this.#stageTimeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      if (!p.proc.alive && p.proc.child !== undefined) throw new Error(`${what}: the process exited (${p.proc.child.exitCode ?? p.proc.child.signalCode})`);
      try {
        const v = await check();
        if (v !== undefined && v !== false) return v;
      } catch (err) {
        last = err;
      }
      await sleep(250);
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
  }

  async #startEtcd(): Promise<void> {
    const peer = `http://${this.host}:${this.#peerPort}`;
    this.#etcd = this.#spawn('etcd', this.tools.etcd, [
      '--name=default',
      `--data-dir=${join(this.dir, 'etcd-data')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      '--unsafe-no-fsync', // a throw-away store on a shared disk
      '--log-level=warn',
    ]);
    await this.#waitFor(this.#etcd, `etcd health at ${this.etcdUrl}`, async () => {
      const r = await fetch(`${this.etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
      return r.ok && ((await r.json()) as { health?: string }).health === 'true';
    });
  }

  /** Starts (or restarts, after {@link stopApiserver}) kube-apiserver on the same port; resolves once /readyz is 200. */
  async startApiserver(): Promise<void> {
    const d = this.dir;
    writeFileSync(
      join(d, 'audit-policy.yaml'),
      stringify({
        apiVersion: 'audit.k8s.io/v1',
        kind: 'Policy',
        omitStages: ['RequestReceived'],
        rules: [
          // The apiserver's own loopback client and the controller manager: not what the tests look at.
          { level: 'None', users: ['system:apiserver', 'system:kube-controller-manager'] },
          // Status writes with their bodies: the tests check Herald's resourceVersion preconditions.
          { level: 'Request', resources: [{ group: '', resources: ['services/status'] }] },
          { level: 'Metadata' },
        ],
      }),
    );
    this.#apiserver = this.#spawn('kube-apiserver', this.tools.kubeApiserver, [
      `--etcd-servers=${this.etcdUrl}`,
      `--bind-address=${this.host}`,
      `--advertise-address=${this.host}`,
      `--secure-port=${this.#apiserverPort}`,
      `--cert-dir=${join(d, 'apiserver-certs')}`,
      `--tls-cert-file=${join(d, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(d, 'apiserver.key')}`,
      `--client-ca-file=${join(d, 'ca.crt')}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${join(d, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(d, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      `--audit-log-path=${join(d, 'audit.log')}`,
      `--audit-policy-file=${join(d, 'audit-policy.yaml')}`,
      '--audit-log-mode=blocking',
      // The kubernetes Service's endpoints would point at a loopback address, which the reconciler refuses.
      '--endpoint-reconciler-type=none',
      '--profiling=false',
      '--v=1',
    ]);
    await this.#waitFor(this.#apiserver, `kube-apiserver /readyz at ${this.server}`, async () => {
      const r = await this.admin.request('GET', '/readyz', undefined, undefined, 3000);
      return r.status === 200;
    });
  }

  /** Stops kube-apiserver (SIGTERM, SIGKILL after 10 s); etcd and the controller manager keep running. */
  async stopApiserver(): Promise<void> {
    await this.#apiserver?.proc.stop(10_000);
  }

  async #startControllerManager(): Promise<void> {
    const d = this.dir;
    const kubeconfig = join(d, 'kcm.kubeconfig');
    writeKubeconfig(kubeconfig, this.server, this.ca, { cert: join(d, 'admin.crt'), key: join(d, 'admin.key') });
    this.#kcm = this.#spawn('kube-controller-manager', this.tools.kubeControllerManager, [
      `--kubeconfig=${kubeconfig}`,
      `--controllers=${this.#controllers.join(',')}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--use-service-account-credentials=false',
      '--v=2',
    ]);
    const kcm = this.#kcm;
    await this.#waitFor(kcm, 'kube-controller-manager: EndpointSlice controller workers started', async () => {
      if (!this.#controllers.includes('endpointslice')) return true;
      // Logged by endpointslice_controller.go once its informers have synced.
      return /endpointslice_controller\.go:\d+\] "Starting service queue worker threads"/.test(readFileSync(kcm.log, 'utf8'));
    });
    // Pods pass the ServiceAccount admission plugin once the controller has made namespace default's ServiceAccount.
    if (this.#controllers.includes('serviceaccount')) {
      await this.#waitFor(kcm, 'ServiceAccount default/default', async () => (await this.admin.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200);
    }
  }

  /**
   * A bearer token of ServiceAccount `namespace/name` from the TokenRequest API (what a Pod's projected token is),
   * valid `expirationSeconds` (default 2 h).
   */
  async serviceAccountToken(namespace: string, name: string, expirationSeconds = 7200, pod?: { name: string; uid: string }): Promise<string> {
    const a = await this.admin.must('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds, ...(pod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid } } : {}) },
    });
    return a.body.status.token as string;
  }

  /**
   * The token a Pod of ServiceAccount `namespace/serviceAccount` on Node `nodeName` is given (its projected token): a
   * Pod `podName` is created there (no kubelet runs it) and the token bound to it, so the apiserver puts the node's
   * name in the token's user info (`authentication.kubernetes.io/node-name`), as for a DaemonSet's pod.
   */
  async podToken(namespace: string, serviceAccount: string, podName: string, nodeName: string): Promise<string> {
    // A pod of that name already there (test/control-plane/harness.ts createHeraldPods) is the one the token is bound to.
    const pod = await this.admin.must('POST', `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace },
      spec: { nodeName, serviceAccountName: serviceAccount, automountServiceAccountToken: false, containers: [{ name: 'herald', image: 'registry.invalid/herald-test:1' }] },
    }, undefined, [409]);
    const uid = pod.status === 409 ? ((await this.admin.must('GET', `/api/v1/namespaces/${namespace}/pods/${podName}`)).body.metadata.uid as string) : (pod.body.metadata.uid as string);
    return this.serviceAccountToken(namespace, serviceAccount, 7200, { name: podName, uid });
  }

  /** Writes a kubeconfig for the apiserver holding `token` to `path`; returns path. */
  writeTokenKubeconfig(path: string, token: string): string {
    return writeKubeconfig(path, this.server, this.ca, { token });
  }

  /** Creates each object as the admin (an existing one is replaced); objects are applied in order. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async apply(objects: any[]): Promise<void> {
    for (const o of objects) {
      const ns = o.metadata?.namespace as string | undefined;
      const created = await this.admin.request('POST', kindPath(o.kind, ns), o);
      if (created.status === 409) {
        const path = kindPath(o.kind, ns, o.metadata.name);
        const cur = await this.admin.must('GET', path);
        await this.admin.must('PUT', path, { ...o, metadata: { ...o.metadata, resourceVersion: cur.body.metadata.resourceVersion } });
      } else if (created.status < 200 || created.status > 299) throw new ApiError('POST', kindPath(o.kind, ns), created);
    }
  }

  /** The audit events logged so far (ResponseStarted/ResponseComplete). */
  audit(): AuditEvent[] {
    const path = join(this.dir, 'audit.log');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as AuditEvent);
  }

  /**
   * The requests API Priority and Fairness has dispatched so far, by `FLOW_SCHEMA/PRIORITY_LEVEL`: the apiserver's
   * `apiserver_flowcontrol_dispatched_requests_total` counters (k8s.io/apiserver pkg/util/flowcontrol/metrics), read
   * from its /metrics as the admin. A request is counted when its priority level lets it run (a watch once, at its
   * start); the audit filter wraps API Priority and Fairness, so a request in the audit log has been counted.
   */
  async dispatchedRequests(): Promise<Map<string, number>> {
    const a = await this.admin.must('GET', '/metrics');
    const out = new Map<string, number>();
    for (const m of String(a.body).matchAll(/^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} (\S+)$/gm)) {
      const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
      out.set(`${labels['flow_schema']}/${labels['priority_level']}`, Number(m[2]));
    }
    return out;
  }

  /** The current etcd revision (the apiserver's resourceVersion counter), from etcd's JSON gateway. */
  async etcdRevision(): Promise<number> {
    const r = await fetch(`${this.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/').toString('base64') }), signal: AbortSignal.timeout(5000) });
    if (!r.ok) throw new Error(`etcd range: HTTP ${r.status}: ${await r.text()}`);
    return Number(((await r.json()) as { header: { revision: string } }).header.revision);
  }

  /** Writes a key outside the apiserver's prefix (moves etcd's revision on without touching any object). */
  async etcdPut(key: string, value: string): Promise<void> {
    const r = await fetch(`${this.etcdUrl}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') }), signal: AbortSignal.timeout(5000) });
    if (!r.ok) throw new Error(`etcd put: HTTP ${r.status}: ${await r.text()}`);
  }

  /** Compacts etcd's history up to `revision` (default: the current one): watches from older revisions get 410. */
  async compactEtcd(revision?: number): Promise<number> {
    const rev = revision ?? (await this.etcdRevision());
    const r = await fetch(`${this.etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: String(rev), physical: true }), signal: AbortSignal.timeout(15_000) });
    if (!r.ok) throw new Error(`etcd compaction: HTTP ${r.status}: ${await r.text()}`);
    return rev;
  }

  /** The last lines of each component's log, for failure messages. */
  logs(lines = 15): string {
    return [this.#etcd, this.#apiserver, this.#kcm]
      .filter((p): p is Proc => p !== undefined)
      .map((p) => {
        const text = existsSync(p.log) ? readFileSync(p.log, 'utf8') : '';
        return `--- ${p.log} (${p.proc.alive ? 'running' : 'stopped'}; ${existsSync(p.log) ? statSync(p.log).size : 0} bytes)\n${text.split('\n').slice(-lines).join('\n')}`;
      })
      .join('\n');
  }

  /** Stops the controller manager, the apiserver and etcd (by PID) and removes the directory. Idempotent. */
  async stop(): Promise<void> {
    await this.#kcm?.proc.stop(5000);
    await this.#apiserver?.proc.stop(10_000);
    await this.#etcd?.proc.stop(5000);
    if (process.env['HERALD_KEEP_CONTROL_PLANE'] === undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Writes a kubeconfig with a client certificate (file paths) or a token; returns path. */
function writeKubeconfig(path: string, server: string, ca: string, auth: { cert: string; key: string } | { token: string }): string {
  const user = 'token' in auth ? { token: auth.token } : { 'client-certificate': auth.cert, 'client-key': auth.key };
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
    users: [{ name: 'test', user }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
    'current-context': 'test',
  };
  writeFileSync(path, stringify(kc), { mode: 0o600 });
  return path;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/**
 * Makes, in `dir`, with the openssl CLI (ECDSA P-256, valid one day): ca.crt/ca.key; apiserver.crt/key for `host`,
 * 10.96.0.1 and the kubernetes.default names; admin.crt/key (CN herald-test-admin, O system:masters); sa.key/sa.pub
 * (the ServiceAccount token signing key).
 */
function makeCertificates(dir: string, host: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=herald-test-ca', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const leaf = (name: string, subj: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(dir, ['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`]);
  };
  leaf('apiserver', '/CN=kube-apiserver', `subjectAltName=IP:${host},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
  leaf('admin', '/O=system:masters/CN=herald-test-admin', 'keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'sa.key']);
  openssl(dir, ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

/** A request the {@link ApiProxy} holds back: its method and path, and `release()` to send it on. */
export interface HeldRequest {
  method: string;
  path: string;
  release(): void;
}

/**
 * A TLS-terminating pass-through in front of the apiserver (same loopback address, own port, the apiserver's
 * serving certificate), for the one fault the real apiserver cannot be asked for: holding a client's request back
 * while the test changes the object, so the request reaches the apiserver with a stale resourceVersion. Requests are
 * forwarded unchanged (headers, bearer token, body) and answers streamed back (watches included).
 */
export class ApiProxy {
  readonly url: string;
  readonly #server: https.Server;
  readonly #cp: ControlPlane;
  #hold: ((method: string, path: string) => boolean) | undefined;
  readonly #held: HeldRequest[] = [];
  readonly #waiters: ((h: HeldRequest) => void)[] = [];

  private constructor(cp: ControlPlane, port: number) {
    this.#cp = cp;
    this.url = `https://${cp.host}:${port}`;
    const key = readFileSync(join(cp.dir, 'apiserver.key'), 'utf8');
    const cert = readFileSync(join(cp.dir, 'apiserver.crt'), 'utf8');
    this.#server = https.createServer({ key, cert }, (req, res) => this.#handle(req, res));
  }

  /** Listens on `cp.host`, a free port; forwards to `cp.server`. */
  static async start(cp: ControlPlane): Promise<ApiProxy> {
    const proxy = new ApiProxy(cp, await freePort(cp.host));
    const port = Number(new URL(proxy.url).port);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(port, cp.host, () => resolve());
    });
    return proxy;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const upstream = new URL(this.#cp.server);
    const forward = () => {
      const up = https.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, ca: this.#cp.ca }, (ures) => {
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        ures.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    };
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    if (this.#hold?.(method, path)) {
      const h: HeldRequest = { method, path, release: forward };
      const w = this.#waiters.shift();
      if (w) w(h);
      else this.#held.push(h);
      return;
    }
    forward();
  }

  /** From now on, hold every request for which `match(method, path)` is true (undefined: hold nothing more). */
  hold(match: ((method: string, path: string) => boolean) | undefined): void {
    this.#hold = match;
  }

  /** The next held request (already held, or the next to arrive); rejects after `timeoutMs`. */
  nextHeld(timeoutMs = 60_000): Promise<HeldRequest> {
    const h = this.#held.shift();
    if (h) return Promise.resolve(h);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no request held within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push((x) => {
        clearTimeout(timer);
        resolve(x);
      });
    });
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    for (const h of this.#held.splice(0)) h.release();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
