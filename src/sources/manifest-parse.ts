/**
 * Parsing one manifest file (src/sources/manifests.ts): YAML documents → the Services, EndpointSlices, Nodes,
 * ServiceCIDRs and Herald's configuration objects in them, or the file's first problem with its 1-based line and
 * column.
 *
 * Linear in the size of the file and pausable: documents are composed one at a time (src/config/yaml.ts), each
 * converted and dropped before the next, lines come from one line index of the file, and the work pauses every few
 * hundred tokens so the source can run it in slices (src/config/slices.ts). 10,000 documents (2.4 MB) take about a
 * second of CPU in slices of 10 ms, instead of a minute of blocked event loop.
 */
import type { KubeObject, ResourceKind } from '../k8s/types.ts';
import { CONFIG_KINDS, HERALD_API_VERSION } from '../k8s/herald-kinds.ts';
import { runSync } from '../config/slices.ts';
import type { Steps } from '../config/slices.ts';
import { LineIndex, YAML_OPTIONS, composeDocuments, largestDocumentBytes, parseJsonText, yamlProblem } from '../config/yaml.ts';
import { ParseBudgetExceeded } from '../config/parse-worker.ts';
import type { YamlProblem } from '../config/yaml.ts';
import type { FileError } from './source.ts';

/** The kinds a manifest source reads; other kinds are ignored (Herald's own only with apiVersion herald.io/v1alpha1). */
export const MANIFEST_KINDS: ReadonlySet<string> = new Set<ResourceKind>(['Service', 'EndpointSlice', 'Node', 'ServiceCIDR', ...CONFIG_KINDS]);
const HERALD_KINDS: ReadonlySet<string> = new Set(CONFIG_KINDS);

/** One object of a known kind. */
export interface ParsedObject {
  kind: ResourceKind;
  obj: KubeObject;
}

/** Outcome of parsing one file. */
export type ManifestParse = { objects: ParsedObject[] } | { error: FileError };

/**
 * Parse one manifest file's text (multi-document files and `kind: List` are accepted).
 * @returns the objects of known kinds, or the first error with its 1-based line/column.
 */
export function parseManifest(path: string, text: string, opts: ManifestParseOptions = {}): ManifestParse {
  return runSync(parseManifestSteps(path, text, opts));
}

/** Options of {@link parseManifest}. */
export interface ManifestParseOptions {
  /**
   * The largest document the YAML library may compose (a parse worker's heap over the library's cost per byte:
   * src/config/parse-worker.ts `libraryMaxBytes`); a file with a bigger one throws ParseBudgetExceeded at once.
   */
  libraryMaxBytes?: number;
}

/** {@link parseManifest} as pausable work (src/config/slices.ts). */
export function* parseManifestSteps(path: string, text: string, opts: ManifestParseOptions = {}): Steps<ManifestParse> {
  const index = new LineIndex(text);
  const objects: ParsedObject[] = [];
  let error: FileError | undefined;
  /** Takes one document's data (from `line`, when known); false (with `error` set) stops the file. */
  const take = (data: unknown, line: number | undefined): boolean => {
    const fail = (message: string): false => {
      error = line === undefined ? { path, message } : { path, line, column: 1, message };
      return false;
    };
    if (data === null || data === undefined) return true; // empty document
    if (typeof data !== 'object' || Array.isArray(data)) return fail('document is not a mapping (expected a Kubernetes object)');
    const items = (data as { kind?: unknown }).kind === 'List' ? ((data as { items?: unknown }).items ?? []) : [data];
    if (!Array.isArray(items)) return fail('kind List: items is not a sequence');
    for (const item of items) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return fail('List item is not a mapping');
      const kind = (item as KubeObject).kind;
      if (typeof kind !== 'string' || !MANIFEST_KINDS.has(kind)) continue;
      const o = item as KubeObject;
      if (HERALD_KINDS.has(kind) && o.apiVersion !== HERALD_API_VERSION) continue; // e.g. MetalLB's BGPPeer
      if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') return fail(`${kind} without metadata.name`);
      if ((kind === 'Service' || kind === 'EndpointSlice') && !o.metadata.namespace) o.metadata.namespace = 'default';
      objects.push({ kind: kind as ResourceKind, obj: o });
    }
    return true;
  };
  // `kubectl get -o json` and other JSON: JSON.parse, at a small part of the YAML library's memory (config/yaml.ts).
  const json = parseJsonText(text, index);
  if (json !== undefined) {
    if (!json.ok) {
      const p = json.problems[0] as YamlProblem;
      return { error: { path, message: p.message, ...(p.line !== undefined ? { line: p.line, column: p.column ?? 1 } : {}) } };
    }
    take(json.value, 1);
    return error !== undefined ? { error } : { objects };
  }
  if (opts.libraryMaxBytes !== undefined) {
    const largest = largestDocumentBytes(text);
    if (largest > opts.libraryMaxBytes) throw new ParseBudgetExceeded(largest);
  }
  yield* composeDocuments(
    text,
    (doc) => {
      const err = doc.errors[0];
      if (err) {
        const p = yamlProblem(err, index);
        error = { path, message: p.message, ...(p.line !== undefined ? { line: p.line, column: p.column ?? 1 } : {}) };
        return false;
      }
      const start = doc.contents?.range?.[0];
      const line = start === undefined ? undefined : index.position(start).line;
      let data: unknown;
      try {
        // The library refuses a document that uses aliases more than 100 times (an alias bomb would expand to
        // gigabytes): that document is this file's error, like a syntax error (issue 35 N1).
        data = doc.toJS();
      } catch (e) {
        error = line === undefined ? { path, message: `document not usable: ${(e as Error).message}` } : { path, line, column: 1, message: `document not usable: ${(e as Error).message}` };
        return false;
      }
      return take(data, line);
    },
    YAML_OPTIONS,
  );
  return error !== undefined ? { error } : { objects };
}
