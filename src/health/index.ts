/**
 * Health checks and flap control (docs/health-checks.md). Public entry point of src/health.
 */
export type { Clock, TimerHandle } from './clock.ts';
export { FakeClock, systemClock } from './clock.ts';
export type { CheckKind, CheckSpec, CheckTiming, HealthState, ProbeFailureCode, ProbeResult, Reason } from './types.ts';
export { ReasonCode } from './types.ts';
export { RiseFall } from './rise-fall.ts';
export type { RiseFallSnapshot } from './rise-fall.ts';
export { DEFAULT_FLAP_CONTROL, FlapDamper, validateFlapControl } from './flap-damper.ts';
export type { DamperStatus, FlapControlParams } from './flap-damper.ts';
export { classifyError, DEFAULT_EXPECTED_STATUS, probeCheck, probeOnce } from './probe.ts';
export type { ProbeTarget } from './probe.ts';
export { Semaphore } from './semaphore.ts';
export { checkSpecError, HealthManager } from './manager.ts';
export type { ChangeInfo, CheckStatus, GateOptions, GateResult, HealthManagerOptions, HealthStats, HealthStatus, ProbeFn, SetChecksResult } from './manager.ts';
export { ANNOTATION_PREFIX, formatAnnotationErrors, HealthAnnotation, parseHealthAnnotations, parseSeconds, parseStatusList } from './annotations.ts';
export type { AnnotationCheck, AnnotationError, AnnotationParse } from './annotations.ts';
export {
  DEFAULT_CHECK_TIMING,
  DEFAULT_KUBE_PROXY_HEALTHZ_PORT,
  flapControlFromConfig,
  invalidCheck,
  kubeProxyNodeCheck,
  kubeProxyServiceCheck,
  nodeAddressFor,
  serviceAnnotationCheck,
  staticRouteCheck,
  timingFromConfig,
} from './specs.ts';
export type { RouteHealthCheckConfig } from './specs.ts';
