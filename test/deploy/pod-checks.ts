/**
 * What a Herald configuration needs from the container that runs it, as Linux and Kubernetes grant it: a BGP listen
 * port below 1024 needs uid 0 with NET_BIND_SERVICE (Kubernetes gives a non-root container no ambient capabilities,
 * kubernetes/kubernetes#56374); the admin API must be where the probes look, the metrics listener on the node address
 * and the port the PodMonitor scrapes; the files it reads must be mounted and the variables it reads set.
 */
import { dirname } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { metricsListener, parseConfigText } from '../../src/config/load.ts';
import type { Config } from '../../src/config/schema.ts';

/** What a container's user and capabilities allow. */
export interface Privileges {
  uid: number;
  /** Effective capabilities. */
  capabilities: Set<string>;
}

/** The runtime's default capability set (a container without `drop: [ALL]` keeps these). */
const DEFAULT_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

/** The uid of the image's USER (scripts/image.sh: 1000). */
export const IMAGE_UID = 1000;

/** The privileges of a process started with `sc` in an image whose USER is `imageUid`. */
export function privileges(sc: k8s.V1SecurityContext | undefined, imageUid: number = IMAGE_UID): Privileges {
  const uid = sc?.runAsUser ?? imageUid;
  const drop = new Set(sc?.capabilities?.drop ?? []);
  const caps = new Set(drop.has('ALL') ? [] : DEFAULT_CAPS.filter((c) => !drop.has(c)));
  for (const c of sc?.capabilities?.add ?? []) caps.add(c);
  return { uid, capabilities: uid === 0 ? caps : new Set() };
}

/** Why `cfg` cannot bind its BGP listen port with `p`, or undefined. */
export function listenProblem(cfg: Config, p: Privileges): string | undefined {
  const port = cfg.bgp.listen?.port;
  if (port === undefined || port >= 1024) return undefined;
  if (p.capabilities.has('NET_BIND_SERVICE')) return undefined;
  return `bgp.listen.port ${port} is below 1024 but the process runs as uid ${p.uid} without an effective NET_BIND_SERVICE (use 1179, docs/routers.md)`;
}

/** Parses herald.yaml text with Herald's own loader; throws with every issue. */
export function parseHeraldYaml(text: string, where: string): Config {
  const r = parseConfigText(text);
  if (!r.ok) throw new Error(`${where}: ${JSON.stringify(r.errors)}`);
  return r.config;
}

/**
 * Everything that keeps `cfg` from starting and draining in `container` of a hostNetwork pod: the listen port, the
 * admin API off loopback or off the probes' port, the metrics listener off the node address or off the port named
 * `metrics`, a preStop hook, the admin token file, stateDir, password files and variables.
 */
export function podProblems(cfg: Config, container: k8s.V1Container): string[] {
  const errors: string[] = [];
  const mounts = (container.volumeMounts ?? []).map((m) => m.mountPath);
  const env = new Set((container.env ?? []).map((e) => e.name));
  const listen = listenProblem(cfg, privileges(container.securityContext));
  if (listen) errors.push(listen);
  if (cfg.admin.address !== '127.0.0.1') errors.push(`admin.address ${cfg.admin.address}: the admin API must stay on loopback (hostNetwork)`);
  if (cfg.admin.port !== container.readinessProbe?.httpGet?.port) errors.push(`admin.port ${cfg.admin.port} is not the probes' port ${container.readinessProbe?.httpGet?.port}`);
  const metricsPort = container.ports?.find((p) => p.name === 'metrics')?.containerPort;
  if (!cfg.metrics) errors.push(`no metrics listener: Prometheus scrapes the port named metrics (${metricsPort}): add metrics: {port: ${metricsPort}}`);
  else {
    if (cfg.metrics.address !== undefined) errors.push(`metrics.address ${cfg.metrics.address}: one address for every node; leave it out for the node's (--node-ip)`);
    if (cfg.metrics.port !== metricsPort) errors.push(`metrics.port ${cfg.metrics.port} is not the port named metrics (${metricsPort})`);
    if (!(container.args ?? []).includes('--node-ip')) errors.push('the metrics listener takes the node address from --node-ip, which the container does not pass');
    try {
      metricsListener(cfg, { nodeName: 'node', routerId: '192.0.2.10', nodeIps: ['192.0.2.10'] });
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  // docs/decisions.md "Stop modes": no unconditional drain before a stop (a rolling update is a restart).
  if (container.lifecycle?.preStop !== undefined) errors.push(`a preStop hook (${JSON.stringify(container.lifecycle.preStop)}): SIGTERM decides restart or departure itself`);
  const tokenFile = cfg.admin.tokenFile;
  if (tokenFile === undefined || !mounts.includes(dirname(tokenFile))) errors.push(`admin.tokenFile ${tokenFile} is not in a mounted volume (herald drain/undrain/reset need it)`);
  if (!mounts.includes(cfg.stateDir)) errors.push(`stateDir ${cfg.stateDir} is not a mounted volume`);
  for (const p of cfg.peers) {
    const { file, env: variable } = p.password ?? {};
    if (file !== undefined && !mounts.includes(dirname(file))) errors.push(`peer ${p.name}: password file ${file} is not in a mounted volume`);
    if (variable !== undefined && !env.has(variable)) errors.push(`peer ${p.name}: password variable ${variable} is not set`);
  }
  return errors;
}
