/**
 * HTTP client of the admin API for the CLI. Turns every failure into an {@link AdminApiError} with a
 * message fit for an operator (no stack traces): daemon not reachable, HTTP error with the
 * server's JSON message, or a non-JSON answer.
 */

/** A failed admin API call; `message` is printed as is. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  /** HTTP status, or 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** Options of {@link AdminClient}. */
export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:9179 */
  api: string;
  /** Bearer token for mutating calls. */
  token?: string;
  /** Per-request deadline, ms (default 10000). */
  timeoutMs?: number;
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connection timed out';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    default:
      if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') return 'no answer in time';
      return cause?.message ?? (err as Error).message;
  }
}

/** Admin API client (global fetch). */
export class AdminClient {
  private readonly base: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;

  constructor(opts: ClientOptions) {
    this.base = opts.api.replace(/\/+$/, '');
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 10000;
  }

  /**
   * GET a JSON document.
   * @throws AdminApiError (not reachable, HTTP error, bad JSON)
   */
  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /**
   * POST a JSON body with the bearer token.
   * @throws AdminApiError
   */
  post<T>(path: string, body: object = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  private async request<T>(method: string, path: string, body?: object): Promise<T> {
    let url: URL;
    try {
      url = new URL(path, `${this.base}/`);
    } catch {
      throw new AdminApiError(`invalid --api URL: ${this.base}`, 0);
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && this.token !== undefined) headers['authorization'] = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new AdminApiError(`cannot reach the Herald daemon at ${this.base} (${describeNetworkError(err)}); is \`herald run\` running? (set --api URL)`, 0);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new AdminApiError(`${this.base} answered HTTP ${res.status} with something that is not JSON; is it the Herald admin API?`, res.status);
    }
    if (!res.ok) {
      const msg = (json as { message?: string } | undefined)?.message ?? res.statusText;
      const hint = res.status === 401 && this.token === undefined ? ' (pass --token-file FILE or set HERALD_ADMIN_TOKEN)' : '';
      throw new AdminApiError(`${msg}${hint} (HTTP ${res.status})`, res.status);
    }
    return json as T;
  }
}
