/**
 * Kubernetes API calls refused with HTTP 403 Forbidden (RBAC does not grant them), kept so that `herald status`
 * (status.forbidden) and the log say at once which permission is missing — the fix is a rule in
 * deploy/kubernetes/rbac.yaml. A call's entry lasts until the same call succeeds. Informers keep their own
 * (src/k8s/informer.ts, `InformerStats.forbidden`); this registry holds the writes: Events, the allocator's Lease,
 * Service status.
 *
 * Error shapes: Herald's client (client.ts) throws `ApiError` with `code` and `body` (the apiserver's Status, parsed);
 * @kubernetes/client-node's typed calls throw `ApiException` with `code` and `body` (the Status JSON as text) and its
 * watches an Error carrying `statusCode`. All three are read.
 */

/** The HTTP status of an API error, if it has one. */
export function apiErrorCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

/**
 * A short text of an API error: "HTTP 403: <the Status message>" when the apiserver sent a Status (its
 * message names the user, verb and resource), else the error's message.
 */
export function apiErrorText(err: unknown): string {
  const code = apiErrorCode(err);
  const body = (err as { body?: unknown } | undefined)?.body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      const status = JSON.parse(body) as { message?: unknown };
      if (typeof status.message === 'string') message = status.message;
    } catch {
      // not a Status
    }
  } else if (body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    message = (body as { message: string }).message;
  }
  if (message === undefined) message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return code !== undefined ? `HTTP ${code}: ${message}` : (message ?? '');
}

/** One forbidden call: "create events", "update leases", "patch services/status". */
export interface ForbiddenCall {
  readonly call: string;
  /** apiErrorText of the last refusal. */
  readonly message: string;
  /** First refusal since the last success, ms since the epoch. */
  readonly sinceMs: number;
}

/** Options of {@link ForbiddenCalls}. */
export interface ForbiddenCallsOptions {
  /** Called when a call becomes forbidden (not again while it stays so): log it as a warning. */
  readonly onForbidden?: (call: ForbiddenCall) => void;
  /** Called when a forbidden call succeeds again. */
  readonly onAllowed?: (call: string) => void;
  readonly nowMs?: () => number;
}

/** See module doc. */
export class ForbiddenCalls {
  readonly #calls = new Map<string, ForbiddenCall>();
  readonly #options: ForbiddenCallsOptions;

  constructor(options: ForbiddenCallsOptions = {}) {
    this.#options = options;
  }

  /**
   * Runs `call`'s request: a success clears its entry, a 403 records it; the result or error passes through
   * unchanged.
   */
  async track<T>(call: string, request: () => Promise<T>): Promise<T> {
    try {
      const result = await request();
      if (this.#calls.delete(call)) this.#options.onAllowed?.(call);
      return result;
    } catch (err) {
      if (apiErrorCode(err) === 403) this.#note(call, err);
      throw err;
    }
  }

  #note(call: string, err: unknown): void {
    const prev = this.#calls.get(call);
    const entry: ForbiddenCall = { call, message: apiErrorText(err), sinceMs: prev?.sinceMs ?? (this.#options.nowMs ?? Date.now)() };
    this.#calls.set(call, entry);
    if (!prev) this.#options.onForbidden?.(entry);
  }

  /** The forbidden calls, as "call: message" texts sorted by call. */
  list(): string[] {
    return [...this.#calls.values()].sort((a, b) => (a.call < b.call ? -1 : 1)).map((c) => `${c.call}: ${c.message}`);
  }
}
