/**
 * Standalone source `{manifests: DIR}`: Services, EndpointSlices, Nodes and ServiceCIDRs read
 * from every `*.yaml` / `*.yml` file directly in DIR (multi-document files and `kind: List` are
 * accepted; other kinds are ignored; hidden files and subdirectories are skipped, which also
 * skips the `..data` links of a mounted ConfigMap while reading its files).
 *
 * Changes are picked up through `fs.watch` on DIR (debounced) and a periodic full rescan as a
 * fallback (fs.watch is not reliable on every filesystem).
 *
 * A broken file (YAML syntax error, a document that is not an object, an object of a known kind
 * without `metadata.name`) is reported in `status().fileErrors` with path, 1-based line and
 * column, and an 'error' event; the last good version of THAT file stays in force. A deleted
 * file withdraws its objects. When the same object is defined in two files, the file whose name
 * sorts last wins. Objects are the raw YAML data (timestamps stay strings, as in watch events).
 *
 * Bounded input (docs/operations.md, "Limits"): only regular files are read — a FIFO, socket or
 * device (directly or through a symlink) is skipped and reported, never opened for a blocking read
 * (src/files/read.ts) — of at most `maxFileBytes` (8 MiB), each within `readTimeoutMs`; a file
 * whose bytes (SHA-256) did not change is not parsed again, and parsing runs in slices of ~10 ms
 * (manifest-parse.ts), a file of 128 KiB or more in a parse worker whose memory is capped at what the pod has free
 * (src/config/parse-worker.ts), so that neither a big file nor one that does not fit stops the daemon. A file that
 * cannot be parsed (a YAML error, an alias bomb, too big to fit) is reported and the scan goes on.
 */
import { EventEmitter } from 'node:events';
import { watch as fsWatch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryReducer } from '../../bgp/main-thread.ts';
import { ObjectStore } from '../k8s/object-store.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import { InputReadError, readRegularFile } from '../files/read.ts';
import { runSliced } from '../config/slices.ts';
import { ParseMemoryError, PARSE_IN_WORKER_BYTES, runParseJob } from '../config/parse-worker.ts';
import { objectKey } from '../k8s/keys.ts';
import type { KubeObject, ResourceKind } from '../k8s/types.ts';
import { MANIFEST_KINDS, parseManifestSteps } from './manifest-parse.ts';
import type { ManifestParse, ParsedObject } from './manifest-parse.ts';
import type { FileError, Source, SourceStatus } from './source.ts';

export { parseManifest } from './manifest-parse.ts';

/** Largest manifest file read, bytes. */
export const DEFAULT_MANIFEST_MAX_BYTES = 8 * 1024 * 1024;
/** Deadline of reading one manifest file, ms. */
export const DEFAULT_MANIFEST_READ_TIMEOUT_MS = 5000;

/** Options of `ManifestSource`. */
export interface ManifestSourceOptions {
  /** Directory holding the manifest files. */
  dir: string;
  /** Full rescan period in ms (default 5000; 0 disables). */
  rescanIntervalMs?: number;
  /** Delay in ms between an fs.watch event and the rescan it triggers (default 50). */
  debounceMs?: number;
  /** Use fs.watch (default true). */
  watch?: boolean;
  /** Largest file read, bytes (default {@link DEFAULT_MANIFEST_MAX_BYTES}); a bigger file is reported and skipped. */
  maxFileBytes?: number;
  /** Deadline of reading one file, ms (default {@link DEFAULT_MANIFEST_READ_TIMEOUT_MS}). */
  readTimeoutMs?: number;
  /** A file of at least this many bytes is parsed in a parse worker (default {@link PARSE_IN_WORKER_BYTES}; tests). */
  parseInWorkerBytes?: number;
  /** Environment for the pod's memory limit (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const KINDS = MANIFEST_KINDS;

interface FileState {
  /** SHA-256 of the bytes parsed. */
  hash: string;
  objects: ParsedObject[];
}

/** See module doc. Events: 'change' (keys), 'synced', 'error' (FileError | Error). */
export class ManifestSource extends EventEmitter implements Source {
  readonly #opts: ManifestSourceOptions;
  readonly #store = new ObjectStore();
  /** "Kind key" → the parsed object last applied for it (an apply that changes nothing Herald reads emits no key). */
  readonly #applied = new Map<string, KubeObject>();
  readonly #files = new Map<string, FileState>(); // last good version per file
  #errors = new Map<string, FileError>();
  #synced = false;
  #running = false;
  #watcher: FSWatcher | undefined;
  #interval: ReturnType<typeof setInterval> | undefined;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #scanning: Promise<void> | undefined;
  #rescanAgain = false;
  #dirError = '';
  /** Aborted by stop(): ends a parse in progress. */
  #abort = new AbortController();
  /** Gives the memory of replaced objects back after a big change (bgp/memory.ts). */
  readonly #memory = new MemoryReducer();
  /** Completed scans (for tests/metrics). */
  scans = 0;

  constructor(opts: ManifestSourceOptions) {
    super();
    this.#opts = opts;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    if (this.#abort.signal.aborted) this.#abort = new AbortController();
    await this.rescan();
    if (this.#opts.watch !== false) this.#startWatcher();
    const period = this.#opts.rescanIntervalMs ?? 5000;
    if (period > 0) {
      this.#interval = setInterval(() => void this.rescan(), period);
      this.#interval.unref();
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#abort.abort();
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#interval) clearInterval(this.#interval);
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#interval = undefined;
    this.#debounce = undefined;
    await this.#scanning;
    this.#memory.stop();
  }

  synced(): boolean {
    return this.#synced;
  }

  snapshot(): Snapshot {
    return this.#store;
  }

  status(): SourceStatus {
    const counts = this.#store.counts();
    const fileErrors = [...this.#errors.values()];
    if (this.#dirError) fileErrors.unshift({ path: this.#opts.dir, message: this.#dirError });
    return {
      type: 'manifests',
      synced: this.#synced,
      resources: (Object.keys(counts) as ResourceKind[]).map((kind) => ({
        kind,
        synced: this.#synced,
        objects: counts[kind],
        restarts: 0,
        errors: fileErrors.length,
        lists: this.scans,
        watchConnects: 0,
        lastWatchConnectAtMs: 0,
        lastEventAtMs: 0,
        lastError: fileErrors[0]?.message ?? '',
      })),
      fileErrors,
    };
  }

  /** Rescan the directory now (serialized: a call during a scan triggers one more scan after it). */
  async rescan(): Promise<void> {
    if (this.#scanning) {
      this.#rescanAgain = true;
      return this.#scanning;
    }
    this.#scanning = (async () => {
      do {
        this.#rescanAgain = false;
        await this.#scanOnce();
      } while (this.#rescanAgain && this.#running);
    })();
    try {
      await this.#scanning;
    } finally {
      this.#scanning = undefined;
    }
  }

  #startWatcher(): void {
    if (this.#watcher) return;
    try {
      this.#watcher = fsWatch(this.#opts.dir, () => this.#scheduleRescan());
      this.#watcher.on('error', () => {
        // e.g. the directory was removed; the periodic rescan takes over.
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch {
      // directory missing: rely on the periodic rescan
    }
  }

  #scheduleRescan(): void {
    if (!this.#running) return;
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      void this.rescan();
    }, this.#opts.debounceMs ?? 50);
    this.#debounce.unref();
  }

  async #scanOnce(): Promise<void> {
    let names: string[];
    try {
      const entries = await readdir(this.#opts.dir, { withFileTypes: true });
      names = entries
        .filter((e) => !e.isDirectory() && !e.name.startsWith('.') && /\.ya?ml$/i.test(e.name))
        .map((e) => e.name)
        .sort();
      this.#dirError = '';
    } catch (e) {
      // Directory unreadable: keep the last known state.
      const msg = `cannot read manifest directory: ${(e as Error).message}`;
      if (msg !== this.#dirError) {
        this.#dirError = msg;
        this.#emitError({ path: this.#opts.dir, message: msg });
      }
      return;
    }
    if (this.#watcher === undefined && this.#running && this.#opts.watch !== false) this.#startWatcher();
    const seen = new Set<string>();
    const newErrors = new Map<string, FileError>();
    let changed = false;
    const report = (e: FileError) => {
      newErrors.set(e.path, e);
      const prevErr = this.#errors.get(e.path);
      if (!prevErr || prevErr.message !== e.message || prevErr.line !== e.line) this.#emitError(e);
    };
    for (const name of names) {
      if (this.#abort.signal.aborted) return;
      const path = join(this.#opts.dir, name);
      let bytes: Buffer;
      try {
        bytes = await readRegularFile(path, {
          maxBytes: this.#opts.maxFileBytes ?? DEFAULT_MANIFEST_MAX_BYTES,
          timeoutMs: this.#opts.readTimeoutMs ?? DEFAULT_MANIFEST_READ_TIMEOUT_MS,
          sizeHint: 'split it into several files',
        });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue; // vanished meanwhile
        if (code === 'EISDIR') continue; // a symlink to a directory: skipped like a subdirectory
        seen.add(path); // not usable now: keep the last good version
        const what = e instanceof InputReadError ? (code === 'ENOTREG' ? `${e.message}; skipped` : code === 'ETOOBIG' ? `file ${e.message}; skipped` : `cannot read: ${e.message}`) : `cannot read: ${(e as Error).message}`;
        report({ path, message: what });
        continue;
      }
      seen.add(path);
      const hash = createHash('sha256').update(bytes).digest('hex');
      const prev = this.#files.get(path);
      const prevErr = this.#errors.get(path);
      if (prev && prev.hash === hash && !prevErr) continue;
      let r: ManifestParse;
      try {
        r = await this.#parse(path, bytes);
      } catch (e) {
        if (this.#abort.signal.aborted) return; // stopped during the parse
        // Anything else is this file's problem, never the end of the scan (issue 35 N1): its last good version stays.
        r = { error: { path, message: e instanceof ParseMemoryError ? e.message : `cannot parse: ${(e as Error).message}` } };
      }
      if ('error' in r) {
        report(r.error);
        continue;
      }
      this.#memory.note((prev?.objects.length ?? 0) + r.objects.length);
      this.#files.set(path, { hash, objects: r.objects });
      changed = true;
    }
    for (const path of [...this.#files.keys()]) {
      if (!seen.has(path)) {
        this.#memory.note(this.#files.get(path)?.objects.length ?? 0);
        this.#files.delete(path);
        changed = true;
      }
    }
    this.#errors = newErrors;
    if (changed || !this.#synced) this.#applyFiles();
    this.scans++;
    if (!this.#synced) {
      this.#synced = true;
      this.emit('synced');
    }
  }

  /**
   * One file's objects: a big file in a parse worker (src/config/parse-worker.ts: running out of memory ends the
   * worker, not the daemon), a small one here in slices.
   */
  async #parse(path: string, bytes: Buffer): Promise<ManifestParse> {
    if (bytes.length < (this.#opts.parseInWorkerBytes ?? PARSE_IN_WORKER_BYTES)) return runSliced(parseManifestSteps(path, bytes.toString('utf8')), { signal: this.#abort.signal });
    return runParseJob<{ path: string; bytes: Uint8Array }, ManifestParse>(new URL('./manifest-parse-job.ts', import.meta.url), { path, bytes }, {
      what: 'this manifest file',
      fix: 'split it into several files, or its kind: List into several documents',
      signal: this.#abort.signal,
      ...(this.#opts.env ? { env: this.#opts.env } : {}),
    });
  }

  #emitError(e: FileError): void {
    if (this.listenerCount('error') > 0) this.emit('error', e);
  }

  /** Replace the store contents with the union of all files' last good versions; emit the change keys. */
  #applyFiles(): void {
    const wanted = new Map<string, ParsedObject>(); // "Kind key" -> object (later file wins)
    for (const path of [...this.#files.keys()].sort()) {
      for (const p of this.#files.get(path)!.objects) wanted.set(`${p.kind} ${objectKey(p.obj)}`, p);
    }
    const keys = new Set<string>();
    for (const kind of KINDS as ReadonlySet<ResourceKind>) {
      for (const cur of this.#store.list(kind)) {
        if (!wanted.has(`${kind} ${objectKey(cur)}`)) for (const k of this.#store.remove(kind, cur)) keys.add(k);
      }
    }
    for (const [k, p] of wanted) {
      // The store keeps a trimmed copy (src/k8s/trim.ts): the parsed object it was made from tells an unchanged file.
      if (this.#applied.get(k) === p.obj) continue;
      for (const ck of this.#store.apply(p.kind, p.obj)) keys.add(ck);
      this.#applied.set(k, p.obj);
    }
    for (const k of this.#applied.keys()) if (!wanted.has(k)) this.#applied.delete(k);
    if (keys.size > 0) this.emit('change', [...keys]);
  }
}
