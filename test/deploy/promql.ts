/**
 * Just enough PromQL reading to check that alerts and dashboards name real series: the metric names an expression
 * selects, the label names it matches on per metric, and the labels it groups by. Not a parser: it never judges
 * whether an expression is valid PromQL, only which names it uses (https://prometheus.io/docs/prometheus/latest/querying/basics/).
 */

/** One vector selector: `metric{label="..."}` (metric is undefined for a bare `{...}` selector). */
export interface Selector {
  metric?: string;
  labels: string[];
}

export interface ExprNames {
  selectors: Selector[];
  /** Labels of `by (...)`, `without (...)`, `on (...)`, `ignoring (...)`, `group_left/right (...)`. */
  grouping: string[];
}

const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan', 'start', 'end']);
const IDENT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;

/** The names `expr` uses. Grafana variables (`$node`, `$__rate_interval`) are skipped. Throws on an unclosed brace. */
export function exprNames(expr: string): ExprNames {
  const out: ExprNames = { selectors: [], grouping: [] };
  let i = 0;
  const skipSpace = (): void => {
    while (i < expr.length && /\s/.test(expr[i] as string)) i++;
  };
  const skipString = (): void => {
    const q = expr[i];
    i++;
    while (i < expr.length && expr[i] !== q) i += expr[i] === '\\' ? 2 : 1;
    i++;
  };
  /** Reads `( a, b )` at i (after optional space); returns the identifiers. */
  const readList = (): string[] => {
    skipSpace();
    if (expr[i] !== '(') return [];
    const end = expr.indexOf(')', i);
    if (end < 0) throw new Error(`unclosed ( in ${expr}`);
    const names = expr.slice(i + 1, end).split(',').map((s) => s.trim()).filter(Boolean);
    i = end + 1;
    return names;
  };
  /** Reads `{...}` at i; returns the label names matched. */
  const readMatchers = (): string[] => {
    const labels: string[] = [];
    i++;
    while (i < expr.length && expr[i] !== '}') {
      const c = expr[i] as string;
      if (c === '"' || c === "'" || c === '`') skipString();
      else if (/[a-zA-Z_]/.test(c)) {
        IDENT.lastIndex = i;
        const m = IDENT.exec(expr);
        labels.push(m?.[0] as string);
        i = IDENT.lastIndex;
      } else i++;
    }
    if (expr[i] !== '}') throw new Error(`unclosed { in ${expr}`);
    i++;
    return labels;
  };
  while (i < expr.length) {
    const c = expr[i] as string;
    if (c === '"' || c === "'" || c === '`') skipString();
    else if (c === '[') {
      const end = expr.indexOf(']', i);
      i = end < 0 ? expr.length : end + 1;
    } else if (c === '{') out.selectors.push({ labels: readMatchers() });
    else if (c === '$') {
      i++;
      IDENT.lastIndex = i;
      if (IDENT.exec(expr)) i = IDENT.lastIndex;
    } else if (/[0-9.]/.test(c)) {
      while (i < expr.length && /[0-9.a-zA-Z]/.test(expr[i] as string)) i++;
    } else if (/[a-zA-Z_:]/.test(c)) {
      IDENT.lastIndex = i;
      const name = (IDENT.exec(expr) as RegExpExecArray)[0];
      i = IDENT.lastIndex;
      const at = i;
      skipSpace();
      if (GROUPING.has(name)) out.grouping.push(...readList());
      else if (expr[i] === '(' || AGGREGATIONS.has(name) || KEYWORDS.has(name)) {
        // A function call or an operator keyword: not a metric.
      } else {
        i = at;
        skipSpace();
        out.selectors.push({ metric: name, labels: expr[i] === '{' ? readMatchers() : [] });
      }
    } else i++;
  }
  return out;
}
