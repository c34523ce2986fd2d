/**
 * Per-Service path attributes from annotations under `herald.io/` (issue 18; validated like the health-check
 * annotations of src/health/annotations.ts: one error per bad annotation, naming it and the fix).
 *
 * | annotation                    | value                                                                         |
 * |-------------------------------|-------------------------------------------------------------------------------|
 * | `herald.io/communities`       | standard communities (RFC 1997), comma or space separated: `"65000:100, no-export"` |
 * | `herald.io/large-communities` | large communities (RFC 8092): `"65000:1:2 65000:1:3"`                          |
 * | `herald.io/med`               | MULTI_EXIT_DISC (RFC 4271 §5.1.4), integer 0-4294967295                        |
 * | `herald.io/as-path-prepend`   | extra copies of the local AS in AS_PATH toward eBGP peers, integer 0-10 (0 = none) |
 *
 * Other projects: MetalLB puts `communities` (and `large:` ones) and `localPref` on a BGPAdvertisement, Cilium
 * `attributes.communities{standard, wellKnown, large}`, kube-router `kube-router.io/path-prepend.as` / `.repeat-n`
 * per node (their published APIs); none has them per Service, which is what metallb/metallb#934 asks for.
 *
 * Community text is parsed by the BGP codec's parsers (bgp/main-thread.ts `parseCommunity`, `parseLargeCommunity`), as the
 * config file's is, so a Service accepts exactly what the config file accepts. Each annotation stands
 * alone: a bad one yields an error and no value for that attribute, the good ones are returned, so the caller can
 * keep announcing with the last good value of the bad one (a bad annotation never withdraws a working announcement).
 */
import { parseCommunity, parseLargeCommunity } from '../../bgp/main-thread.ts';
import type { AnnotationError } from '../k8s/annotations.ts';
import { nonTextAnnotations, textAnnotations } from '../k8s/annotations.ts';

/** Exact annotation names. */
export const ServiceAttributeAnnotation = {
  Communities: 'herald.io/communities',
  LargeCommunities: 'herald.io/large-communities',
  Med: 'herald.io/med',
  AsPathPrepend: 'herald.io/as-path-prepend',
} as const;

/** Most communities one annotation may list (each standard community takes 4 octets, each large one 12). */
export const MAX_COMMUNITIES_PER_ANNOTATION = 64;
/**
 * Most extra copies of the local AS a Service may ask for in herald.io/as-path-prepend (FRR's `set as-path prepend
 * last-as` allows 1-10 as well); what the Speaker takes at all is bgp/'s `MAX_AS_PATH_PREPEND` (254).
 */
export const MAX_PREPEND_PER_ANNOTATION = 10;

/** The attributes a Service asks for; absent = not asked for (or its annotation is bad, see `errors`). */
export interface ServiceAttributes {
  /** RFC 1997 communities as written (trimmed), duplicates (by value) removed, in first-seen order. */
  readonly communities?: readonly string[];
  /** RFC 8092 large communities "G:L1:L2" as written (trimmed), duplicates removed. */
  readonly largeCommunities?: readonly string[];
  /** MULTI_EXIT_DISC, 0..4294967295. */
  readonly med?: number;
  /** Extra copies of the local AS prepended toward eBGP peers, 0..10. */
  readonly asPathPrepend?: number;
}

/** The attributes one annotation each sets. */
export type ServiceAttributeName = keyof ServiceAttributes;

/** The valid attributes and one error per bad annotation. */
export interface ServiceAttributesParse {
  readonly attributes: ServiceAttributes;
  readonly errors: readonly AnnotationError[];
  /**
   * The attributes the Service asks for but whose value is unusable: a bad annotation, or an annotation whose name
   * differs from the attribute's only in case, separators or plural while the exact name is absent. Sorted.
   */
  readonly invalid: readonly ServiceAttributeName[];
}

const ATTRIBUTE_OF: Readonly<Record<string, ServiceAttributeName>> = {
  [ServiceAttributeAnnotation.Communities]: 'communities',
  [ServiceAttributeAnnotation.LargeCommunities]: 'largeCommunities',
  [ServiceAttributeAnnotation.Med]: 'med',
  [ServiceAttributeAnnotation.AsPathPrepend]: 'asPathPrepend',
};

const KNOWN: readonly string[] = Object.values(ServiceAttributeAnnotation);

/**
 * A comma or space separated list; `parse` gives an item's value key (for duplicates) or undefined when it is bad.
 * Throws Error naming every bad item and the form to use.
 */
function parseList(value: string, parse: (item: string) => string | undefined, what: readonly [one: string, many: string], fix: string): string[] {
  const items = value.split(/[\s,]+/).filter((x) => x !== '');
  if (items.length === 0) throw new Error(`is empty: list at least one ${what[0]} (${fix}) or remove the annotation`);
  if (items.length > MAX_COMMUNITIES_PER_ANNOTATION) throw new Error(`lists ${items.length} ${what[1]}; at most ${MAX_COMMUNITIES_PER_ANNOTATION}`);
  const bad = items.filter((x) => parse(x) === undefined);
  if (bad.length > 0) throw new Error(`${bad.map((x) => JSON.stringify(x)).join(', ')} ${bad.length === 1 ? `is not a ${what[0]}` : `are not ${what[1]}`}: use ${fix}`);
  const seen = new Set<string>();
  return items.filter((x) => {
    const key = parse(x) as string;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function parseInteger(value: string, min: number, max: number, what: string): number {
  const v = value.trim();
  if (!/^\d{1,10}$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`must be ${what}, an integer ${min}-${max}, got ${JSON.stringify(value)}`);
  return Number(v);
}

/** The value key of `text` under a codec parser (which throws on anything else), or undefined when it does not parse. */
function parsedKey(parse: (text: string) => unknown, text: string): string | undefined {
  try {
    return String(parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The attribute an annotation sets: its exact name, or a name that differs from it only in case, separators or
 * plural (what `parseServiceAttributes` reports as a typo). Undefined for any other annotation.
 */
export function attributeOfAnnotation(name: string): ServiceAttributeName | undefined {
  const exact = ATTRIBUTE_OF[name];
  if (exact !== undefined || !name.startsWith('herald.io/')) return exact;
  const near = KNOWN.find((k) => folded(k) === folded(name));
  return near === undefined ? undefined : ATTRIBUTE_OF[near];
}

/** A name folded for typo matching: lower case, no separators, no plural ("Large_Community" ~ "large-communities"). */
function folded(name: string): string {
  return name.toLowerCase().replace(/[-_.]/g, '').replace(/ies$/, 'y').replace(/s$/, '');
}

/**
 * Reads the path-attribute annotations of a Service.
 *
 * @param annotations `metadata.annotations` (may be undefined)
 * @returns the attributes of the valid annotations, one error per bad one (also one for an unknown `herald.io/`
 *   annotation that differs from a known name only in case, separators or plural, with the suggestion), and the
 *   attributes those errors leave without a usable value. Never throws.
 */
export function parseServiceAttributes(annotations: Readonly<Record<string, string>> | undefined): ServiceAttributesParse {
  const a = textAnnotations(annotations);
  // A value that is not a string (a manifest's unquoted `herald.io/med: 100`) is a bad annotation like the others.
  const errors: AnnotationError[] = nonTextAnnotations(annotations, KNOWN);
  const invalid = new Set<ServiceAttributeName>(errors.map((e) => ATTRIBUTE_OF[e.annotation] as ServiceAttributeName));
  const out: { -readonly [K in keyof ServiceAttributes]: ServiceAttributes[K] } = {};
  const field = <T>(name: string, parse: (v: string) => T): T | undefined => {
    const v = a[name];
    if (v === undefined) return undefined;
    try {
      return parse(v);
    } catch (err) {
      errors.push({ annotation: name, value: v, message: (err as Error).message });
      invalid.add(ATTRIBUTE_OF[name] as ServiceAttributeName);
      return undefined;
    }
  };
  const communities = field(ServiceAttributeAnnotation.Communities, (v) =>
    // A bare number ("65000") is refused though the codec reads it as 0:65000 (issue 35): never what was meant.
    parseList(v, (x) => (/^\d+$/.test(x) ? undefined : parsedKey(parseCommunity, x)), ['community', 'communities'], '"ASN:VALUE" (0-65535 each) or a well-known name such as no-export'),
  );
  if (communities !== undefined) out.communities = communities;
  const large = field(ServiceAttributeAnnotation.LargeCommunities, (v) =>
    parseList(v, (x) => parsedKey(parseLargeCommunity, x), ['large community', 'large communities'], '"GLOBAL:LOCAL1:LOCAL2" (0-4294967295 each)'),
  );
  if (large !== undefined) out.largeCommunities = large;
  const med = field(ServiceAttributeAnnotation.Med, (v) => parseInteger(v, 0, 4294967295, 'a MED'));
  if (med !== undefined) out.med = med;
  const prepend = field(ServiceAttributeAnnotation.AsPathPrepend, (v) => parseInteger(v, 0, MAX_PREPEND_PER_ANNOTATION, 'the number of extra copies of the local AS'));
  if (prepend !== undefined) out.asPathPrepend = prepend;
  for (const key of Object.keys(a)) {
    if (!key.startsWith('herald.io/') || KNOWN.includes(key)) continue;
    const near = KNOWN.find((k) => folded(k) === folded(key));
    if (near === undefined) continue;
    errors.push({ annotation: key, value: a[key], message: `unknown annotation; did you mean ${near}?` });
    if (a[near] === undefined) invalid.add(ATTRIBUTE_OF[near] as ServiceAttributeName);
  }
  return { attributes: out, errors, invalid: [...invalid].sort() };
}
