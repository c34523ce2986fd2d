/**
 * Output lines as JSON text. The codec writes the JSON of messages and attribute lists as text
 * (`messageJsonText`, `attributesJsonText`, bgp/codec/attributes-json.ts); the lines of `herald decode` put a few
 * fields of their own around that text. Each helper returns exactly what `JSON.stringify` prints for the object
 * the line stands for, so the output is the same as serialising whole objects.
 */

/**
 * JSON text of `fields` followed by the fields of `raw`, whose values are JSON text already, e.g.
 * `jsonWith({ sequence: 1 }, { entries: '[{"peerIndex":0}]' })` → `{"sequence":1,"entries":[{"peerIndex":0}]}`.
 * Keys of `raw` must not be keys of `fields`.
 */
export function jsonWith(fields: Record<string, unknown>, raw: Readonly<Record<string, string>>): string {
  const s = JSON.stringify(fields);
  let extra = '';
  for (const k in raw) extra += ',' + JSON.stringify(k) + ':' + raw[k];
  if (extra === '') return s;
  return s === '{}' ? '{' + extra.slice(1) + '}' : s.slice(0, -1) + extra + '}';
}

/**
 * JSON text of `{ ...fields, ...object }` where `objectText` is the JSON text of an object (a message's JSON form):
 * the fields first, then the object's. The two must have no key in common.
 */
export function jsonSpread(fields: Record<string, unknown>, objectText: string): string {
  const s = JSON.stringify(fields);
  if (s === '{}') return objectText;
  if (objectText === '{}') return s;
  return s.slice(0, -1) + ',' + objectText.slice(1);
}
