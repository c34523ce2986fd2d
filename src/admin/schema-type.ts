/**
 * The TypeScript type of a JSON Schema written `as const`, for the subset the admin API's schemas use (object with
 * properties, required and additionalProperties; array with items; string, integer, number, boolean), so that a view
 * whose schema fastify enforces has no second, hand-written type (src/admin/peer-view.ts).
 */

/** The value a schema describes. */
export type FromSchema<S> = S extends { readonly type: 'object' }
  ? ObjectOf<S>
  : S extends { readonly type: 'array'; readonly items: infer I }
    ? FromSchema<I>[]
    : S extends { readonly type: 'string' }
      ? string
      : S extends { readonly type: 'integer' | 'number' }
        ? number
        : S extends { readonly type: 'boolean' }
          ? boolean
          : unknown;

type ObjectOf<S> = S extends { readonly properties: infer P }
  ? Flat<Props<P, S extends { readonly required: readonly (infer R)[] } ? R : never>>
  : S extends { readonly additionalProperties: infer A }
    ? Record<string, FromSchema<A>>
    : Record<string, unknown>;

/** The required properties (in `R`) and the optional ones. */
type Props<P, R> = { -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]> } & { -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]> };

/** One object type instead of an intersection (readable in messages). */
type Flat<T> = { [K in keyof T]: T[K] };
