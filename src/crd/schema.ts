/**
 * The CustomResourceDefinitions of herald.io/v1alpha1, generated from the configuration's zod schema through the
 * kinds' field maps (kinds.ts): `deploy/kubernetes/crds/*.yaml` and the Helm chart's `files/crds/`, written by
 * `scripts/gen-config-docs.ts`; test/src/crd/docs.test.ts checks the committed files are current.
 *
 * The apiserver needs structural schemas (Kubernetes docs, "Extend the Kubernetes API with CustomResourceDefinitions",
 * "Specifying a structural schema"): every node has a `type`, no `additionalProperties` beside `properties`, no
 * unions. zod's JSON Schema (2020-12) is converted: `exclusiveMinimum: N` becomes OpenAPI 3.0's `minimum: N,
 * exclusiveMinimum: true`, the safe-integer bounds zod puts on every integer are dropped, unknown fields are pruned
 * (and refused by `kubectl apply`'s strict field validation) instead of `additionalProperties: false`. A construct the
 * conversion does not know throws, naming the field, so the schema cannot silently grow out of it.
 */
import { z } from 'zod';
import { stringify } from 'yaml';
import { HERALD_GROUP, HERALD_PLURALS, HERALD_VERSION } from '../k8s/herald-kinds.ts';
import type { CelRule, FieldMap, KindSpec } from './kinds.ts';
import { KINDS } from './kinds.ts';

/** The JSON Schema (2020-12) subset zod writes for Herald's schemas. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  pattern?: string;
  format?: string;
}

/** An OpenAPI v3 schema node as apiextensions.k8s.io/v1 JSONSchemaProps (the fields Herald uses). */
export interface OpenApiSchema {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  'x-kubernetes-validations'?: CelRule[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

/** The input-side JSON Schema of a zod schema (what a user writes: fields with defaults are optional). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** Integers zod bounds by Number.MAX_SAFE_INTEGER: no bound for a user. */
const SAFE = 9007199254740991;

/** `value` (a default) with its keys renamed as `map` renames the fields it is the value of. */
function renameValue(value: unknown, map: FieldMap | undefined): unknown {
  if (map === undefined || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => renameValue(v, map));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (map.omit?.includes(k)) continue;
    const path = map.rename?.[k] ?? [k];
    let at = out;
    for (const p of path.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
    at[path[path.length - 1] as string] = renameValue(v, map.nested?.[k]);
  }
  return out;
}

/** Converts one JSON Schema node; `at` is its CRD path under spec (for rules, list types and errors). */
class Converter {
  readonly #kind: KindSpec;
  readonly #used = new Set<string>();

  constructor(kind: KindSpec) {
    this.#kind = kind;
  }

  convert(s: JsonSchema, map: FieldMap | undefined, at: string): OpenApiSchema {
    const where = `${this.#kind.kind} spec${at === '' ? '' : `.${at}`}`;
    if (s.anyOf || s.oneOf || s.allOf) throw new Error(`${where}: a union cannot be a structural schema; give the field one type`);
    if (Array.isArray(s.type) && s.type.length === 2 && s.type.includes('string') && (s.type.includes('number') || s.type.includes('integer'))) {
      // A number or a text (a bandwidth: 125000000 or "1gbps"): the one union a structural schema has, int-or-string
      // (an integer or a string; the value itself is checked by src/crd/objects.ts).
      return { 'x-kubernetes-int-or-string': true, ...(s.description !== undefined ? { description: s.description } : {}) };
    }
    if (typeof s.type !== 'string') throw new Error(`${where}: no single type (${JSON.stringify(s.type)})`);
    const out: OpenApiSchema = { type: s.type };
    if (s.description !== undefined) out.description = s.description;
    if (s.default !== undefined) out.default = renameValue(s.default, map);
    switch (s.type) {
      case 'object':
        if (s.properties) this.#object(s, map, at, out);
        else if (typeof s.additionalProperties === 'object') out.additionalProperties = this.convert(s.additionalProperties, undefined, `${at}{}`);
        else throw new Error(`${where}: an object needs properties or a value schema`);
        break;
      case 'array':
        if (!s.items) throw new Error(`${where}: a list needs an item schema`);
        out.items = this.convert(s.items, map, `${at}[]`);
        if (s.minItems !== undefined) out.minItems = s.minItems;
        if (s.maxItems !== undefined) out.maxItems = s.maxItems;
        break;
      case 'string':
        if (s.enum) out.enum = s.enum;
        if (s.minLength !== undefined) out.minLength = s.minLength;
        if (s.maxLength !== undefined) out.maxLength = s.maxLength;
        if (s.pattern !== undefined) out.pattern = s.pattern;
        break;
      case 'integer':
      case 'number':
        if (s.minimum !== undefined && s.minimum > -SAFE) out.minimum = s.minimum;
        if (s.maximum !== undefined && s.maximum < SAFE) out.maximum = s.maximum;
        if (s.exclusiveMinimum !== undefined) {
          out.minimum = s.exclusiveMinimum;
          out.exclusiveMinimum = true;
        }
        if (s.exclusiveMaximum !== undefined) throw new Error(`${where}: exclusiveMaximum is not converted`);
        break;
      case 'boolean':
        break;
      default:
        throw new Error(`${where}: type ${s.type} is not converted`);
    }
    const rules = this.#kind.rules[at];
    if (rules !== undefined) {
      out['x-kubernetes-validations'] = [...rules];
      this.#used.add(`rule ${at}`);
    }
    const list = this.#kind.listTypes?.[at];
    if (list !== undefined) {
      out['x-kubernetes-list-type'] = list.type;
      if (list.type === 'map') out['x-kubernetes-list-map-keys'] = [...list.keys];
      this.#used.add(`list ${at}`);
    }
    return out;
  }

  #object(s: JsonSchema, map: FieldMap | undefined, at: string, out: OpenApiSchema): void {
    const props: Record<string, OpenApiSchema> = {};
    const required: string[] = [];
    const req = new Set(s.required ?? []);
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      if (map?.omit?.includes(name)) continue;
      const path = map?.rename?.[name] ?? [name];
      let parent = props;
      let parentAt = at;
      for (const group of path.slice(0, -1)) {
        const groupAt = parentAt === '' ? group : `${parentAt}.${group}`;
        parent[group] ??= { type: 'object', ...(map?.groups?.[group] !== undefined ? { description: map.groups[group] } : {}), properties: {} };
        parent = parent[group].properties as Record<string, OpenApiSchema>;
        parentAt = groupAt;
      }
      const leaf = path[path.length - 1] as string;
      const leafAt = parentAt === '' ? leaf : `${parentAt}.${leaf}`;
      parent[leaf] = this.convert(p, map?.nested?.[name], leafAt);
      if (req.has(name)) {
        if (path.length > 1) throw new Error(`${this.#kind.kind} spec.${leafAt}: a required field cannot move into a group`);
        required.push(leaf);
      }
    }
    out.properties = props;
    if (required.length > 0) out.required = required;
  }

  /** Throws when a rule or list type names a path the schema does not have (a stale name after a rename). */
  checkAllUsed(): void {
    const stale = [...Object.keys(this.#kind.rules).map((p) => `rule ${p}`), ...Object.keys(this.#kind.listTypes ?? {}).map((p) => `list ${p}`)].filter((p) => !this.#used.has(p));
    if (stale.length > 0) throw new Error(`${this.#kind.kind}: no field at ${stale.join(', ')} (kinds.ts)`);
  }
}

/**
 * The OpenAPI schema of `spec` and `status` of one kind.
 * @throws Error naming the field when the zod schema uses something a structural schema cannot hold
 */
export function kindSchemas(kind: KindSpec): { spec: OpenApiSchema; status: OpenApiSchema } {
  const c = new Converter(kind);
  const spec = c.convert(jsonSchemaOf(kind.spec), kind.fields, '');
  c.checkAllUsed();
  const status = new Converter({ ...kind, rules: {}, listTypes: {} }).convert(jsonSchemaOf(kind.status), undefined, '');
  return { spec, status };
}

/** The CustomResourceDefinition (apiextensions.k8s.io/v1) of one kind, with these metadata annotations if any. */
export function crdDocument(kind: KindSpec, annotations?: Readonly<Record<string, string>>): Record<string, unknown> {
  const { spec, status } = kindSchemas(kind);
  const plural = HERALD_PLURALS[kind.kind];
  const root: Record<string, unknown> = {
    type: 'object',
    description: kind.description,
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status },
    required: ['spec'],
  };
  if (kind.rootRules !== undefined) root['x-kubernetes-validations'] = [...kind.rootRules];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${HERALD_GROUP}`, ...(annotations !== undefined ? { annotations: { ...annotations } } : {}), labels: { 'app.kubernetes.io/name': 'herald' } },
    spec: {
      group: HERALD_GROUP,
      names: { kind: kind.kind, listKind: `${kind.kind}List`, plural, singular: kind.singular, categories: ['herald'] },
      scope: 'Namespaced',
      versions: [
        {
          name: HERALD_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: kind.columns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: root },
        },
      ],
    },
  };
}

/**
 * The annotation of the chart's copies: Helm installs and upgrades the CRDs with the release (templates/crds.yaml,
 * not Helm's crds/ folder, which it never upgrades) and leaves them, and so every object of their kinds, on uninstall.
 */
export const HELM_KEEP = { 'helm.sh/resource-policy': 'keep' } as const;

/**
 * The generated CRD files, keyed by path relative to the repository root: kustomize's copy and the chart's
 * (deploy/helm/herald/files/crds/, rendered by templates/crds.yaml; the same objects with {@link HELM_KEEP}).
 */
export function generatedCrdFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  const header = '# Generated by `node scripts/gen-config-docs.ts` from src/config/schema.ts and src/crd/kinds.ts. Do not edit by hand.\n';
  const names: string[] = [];
  for (const kind of KINDS) {
    const file = `${HERALD_PLURALS[kind.kind]}.${HERALD_GROUP}.yaml`;
    names.push(file);
    out[`deploy/kubernetes/crds/${file}`] = header + stringify(crdDocument(kind), { lineWidth: 0 });
    out[`deploy/helm/herald/files/crds/${file}`] = header + stringify(crdDocument(kind, HELM_KEEP), { lineWidth: 0 });
  }
  out['deploy/kubernetes/crds/kustomization.yaml'] =
    header + stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: names });
  return out;
}
