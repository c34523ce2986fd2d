/**
 * fastify's own schema compilers (ajv for requests, fast-json-stringify for responses: @fastify/ajv-compiler and
 * @fastify/fast-json-stringify-compiler, what fastify uses when given none), loaded and run on a route's first
 * request instead of at start-up. A daemon's admin API answers the probes (/healthz, /readyz) and now and then a
 * `herald` command; compiling every route's schemas at start held ~8 MiB of generated code and the ajv instances for
 * the daemon's lifetime, and took ~0.5 s of CPU (docs/benchmarks.md "Where the memory goes"). Validation and
 * serialization are the same functions, built from the same options; a schema fastify cannot compile fails its
 * route's first request (500) instead of the start-up, and test/src/admin/ exercises every route.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';

const require = createRequire(import.meta.url);

type Validator = ReturnType<ReturnType<ValidatorFactory>>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/** `schemaController` option of Fastify(): the compilers above, each route's built on its first use. */
export function lazySchemaController(): NonNullable<FastifyServerOptions['schemaController']> {
  const buildValidator: ValidatorFactory = (externalSchemas, options) => {
    let compile: ReturnType<ValidatorFactory> | undefined;
    return (route) => {
      let real: Validator | undefined;
      // fastify reads `.errors` of the function it called after a failed validation (ajv's convention).
      const validate = ((data: unknown) => {
        compile ??= (require('@fastify/ajv-compiler') as () => ValidatorFactory)()(externalSchemas, options);
        real ??= compile(route);
        const ok = real(data);
        validate.errors = real.errors;
        return ok;
      }) as Validator;
      return validate;
    };
  };
  const buildSerializer: SerializerFactory = (externalSchemas, options) => {
    let compile: ReturnType<SerializerFactory> | undefined;
    return (route) => {
      let real: Serializer | undefined;
      return (doc) => {
        compile ??= (require('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)()(externalSchemas, options);
        real ??= compile(route);
        return real(doc);
      };
    };
  };
  return { compilersFactory: { buildValidator, buildSerializer } };
}
