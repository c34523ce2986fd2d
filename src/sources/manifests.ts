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
 */
import { EventEmitter } from 'node:events';
import { watch as fsWatch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ObjectStore } from '../k8s/object-store.ts';
import type { Snapshot } from '../k8s/object-store.ts';
import { objectKey } from '../k8s/keys.ts';
import type { KubeObject, ResourceKind } from '../k8s/types.ts';
import type { FileError, Source, SourceStatus } from './source.ts';

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
}

const KINDS: ReadonlySet<string> = new Set<ResourceKind>(['Service', 'EndpointSlice', 'Node', 'ServiceCIDR']);

interface ParsedObject {
  kind: ResourceKind;
  obj: KubeObject;
}

interface FileState {
  text: string;
  objects: ParsedObject[];
}

/**
 * Parse one manifest file's text.
 * @returns the objects of known kinds, or the first error with its 1-based line/column.
 */
export function parseManifest(path: string, text: string): { objects: ParsedObject[] } | { error: FileError } {
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const objects: ParsedObject[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      const first = err.message.split('\n')[0] ?? err.message;
      const e: FileError = { path, message: first.replace(/ at line \d+, column \d+:?$/, '') };
      if (pos) {
        e.line = pos.line;
        e.column = pos.col;
      }
      return { error: e };
    }
    const data: unknown = doc.toJS();
    if (data === null || data === undefined) continue; // empty document
    const line = doc.contents?.range ? lineOf(text, doc.contents.range[0]) : undefined;
    const fail = (message: string): { error: FileError } => ({ error: line === undefined ? { path, message } : { path, line, column: 1, message } });
    if (typeof data !== 'object' || Array.isArray(data)) return fail('document is not a mapping (expected a Kubernetes object)');
    const items = (data as { kind?: unknown }).kind === 'List' ? ((data as { items?: unknown }).items ?? []) : [data];
    if (!Array.isArray(items)) return fail('kind List: items is not a sequence');
    for (const item of items) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return fail('List item is not a mapping');
      const kind = (item as KubeObject).kind;
      if (typeof kind !== 'string' || !KINDS.has(kind)) continue;
      const o = item as KubeObject;
      if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') return fail(`${kind} without metadata.name`);
      if ((kind === 'Service' || kind === 'EndpointSlice') && !o.metadata.namespace) o.metadata.namespace = 'default';
      objects.push({ kind: kind as ResourceKind, obj: o });
    }
  }
  return { objects };
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** See module doc. Events: 'change' (keys), 'synced', 'error' (FileError | Error). */
export class ManifestSource extends EventEmitter implements Source {
  readonly #opts: ManifestSourceOptions;
  readonly #store = new ObjectStore();
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
  /** Completed scans (for tests/metrics). */
  scans = 0;

  constructor(opts: ManifestSourceOptions) {
    super();
    this.#opts = opts;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
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
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#interval) clearInterval(this.#interval);
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#interval = undefined;
    this.#debounce = undefined;
    await this.#scanning;
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
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && !e.name.startsWith('.') && /\.ya?ml$/i.test(e.name))
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
    for (const name of names) {
      const path = join(this.#opts.dir, name);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // vanished meanwhile
        if ((e as NodeJS.ErrnoException).code === 'EISDIR') continue;
        seen.add(path); // unreadable: keep the last good version
        newErrors.set(path, { path, message: `cannot read: ${(e as Error).message}` });
        continue;
      }
      seen.add(path);
      const prev = this.#files.get(path);
      const prevErr = this.#errors.get(path);
      if (prev && prev.text === text && !prevErr) continue;
      const r = parseManifest(path, text);
      if ('error' in r) {
        newErrors.set(path, r.error);
        if (!prevErr || prevErr.message !== r.error.message || prevErr.line !== r.error.line) this.#emitError(r.error);
        continue;
      }
      this.#files.set(path, { text, objects: r.objects });
    }
    for (const path of [...this.#files.keys()]) if (!seen.has(path)) this.#files.delete(path);
    this.#errors = newErrors;
    this.#applyFiles();
    this.scans++;
    if (!this.#synced) {
      this.#synced = true;
      this.emit('synced');
    }
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
    const current = new Map<string, string>();
    for (const kind of KINDS as ReadonlySet<ResourceKind>) {
      for (const cur of this.#store.list(kind)) current.set(`${kind} ${objectKey(cur)}`, JSON.stringify(cur));
    }
    for (const [k, p] of wanted) {
      if (current.get(k) === JSON.stringify(p.obj)) continue;
      for (const ck of this.#store.apply(p.kind, p.obj)) keys.add(ck);
    }
    if (keys.size > 0) this.emit('change', [...keys]);
  }
}
