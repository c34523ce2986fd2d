/**
 * KubeConfig loading with Herald's precedence (docs/decisions.md "Kubeconfig precedence"):
 * `source.kubernetes.kubeconfig` (a file path) > `KUBECONFIG` env (several files merged, as
 * kubectl does) > in-cluster service account (KUBERNETES_SERVICE_HOST/PORT + token file).
 * Source: @kubernetes/client-node 2.x `KubeConfig.loadFromFile/loadFromDefault/loadFromCluster`.
 */
import { KubeConfig } from '@kubernetes/client-node';

/** Where the configuration came from. */
export type KubeConfigOrigin = 'config' | 'env' | 'in-cluster';

/**
 * Load a KubeConfig.
 * @param kubeconfigPath `source.kubernetes.kubeconfig` from Herald's config, if any.
 * @param env environment (default `process.env`).
 * @throws Error when the chosen file cannot be read/parsed, or when no kubeconfig is given and
 *   the process is not in a cluster (KUBERNETES_SERVICE_HOST unset).
 */
export function loadKubeConfig(kubeconfigPath?: string, env: NodeJS.ProcessEnv = process.env): { kc: KubeConfig; origin: KubeConfigOrigin } {
  const kc = new KubeConfig();
  if (kubeconfigPath) {
    try {
      kc.loadFromFile(kubeconfigPath);
    } catch (e) {
      throw new Error(`cannot load kubeconfig ${kubeconfigPath}: ${(e as Error).message}`, { cause: e });
    }
    return { kc, origin: 'config' };
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(':').filter(Boolean);
    try {
      if (files.length === 1) kc.loadFromFile(files[0] as string);
      else kc.loadFromDefault();
    } catch (e) {
      throw new Error(`cannot load kubeconfig from KUBECONFIG=${env.KUBECONFIG}: ${(e as Error).message}`, { cause: e });
    }
    return { kc, origin: 'env' };
  }
  if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) {
    throw new Error('no kubeconfig: set source.kubernetes.kubeconfig or KUBECONFIG, or run in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)');
  }
  kc.loadFromCluster();
  return { kc, origin: 'in-cluster' };
}
