/**
 * Kubernetes label selectors (metav1.LabelSelector): `matchLabels` AND every `matchExpressions`
 * requirement. An undefined or empty selector matches everything.
 *
 * Operators (source: apimachinery pkg/apis/meta/v1 LabelSelectorRequirement, pkg/labels):
 *   In: key present and value in values; NotIn: key absent or value not in values;
 *   Exists: key present; DoesNotExist: key absent.
 */

/** One requirement of a label selector. */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/**
 * True when `labels` satisfy `selector`.
 * @throws Error for an unknown operator (config validation should have rejected it).
 */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(l, k) || l[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(l[req.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[req.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new Error(`label selector: unknown operator ${JSON.stringify((req as { operator: unknown }).operator)}`);
    }
  }
  return true;
}

/**
 * True when `labels` satisfy the one selector `selector` (absent: matches) AND any of `selectors` (MetalLB's
 * `nodeSelectors` / `serviceSelectors`: an absent or empty list matches everything). The configuration allows one of
 * the two forms, not both (src/config/schema.ts).
 * @throws Error as {@link matchesSelector}
 */
export function matchesSelectors(selector: LabelSelector | undefined, selectors: readonly LabelSelector[] | undefined, labels: Record<string, string> | undefined): boolean {
  if (!matchesSelector(selector, labels)) return false;
  return selectors === undefined || selectors.length === 0 || selectors.some((s) => matchesSelector(s, labels));
}
