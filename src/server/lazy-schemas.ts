import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import type { FastifyRouteSchemaDef, FastifyValidationResult } from 'fastify/types/schema.js';

type Validate = FastifyValidationResult & { schemaEnv?: unknown };
type ValidatorFactory = (externalSchemas: unknown, options: unknown) => (route: FastifyRouteSchemaDef<unknown>) => Validate;
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: FastifyRouteSchemaDef<unknown>) => (data: unknown) => string;
// Fastify types its factories as ajv's own; these stand in for them and hand back what those return.
type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

// Fastify's own compilers, resolved from Fastify so they are the versions it was built against.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

/**
 * Whether a schema accepts every value its part of a request can hold, so that validating it is a
 * no-op: an empty schema, or, for headers (which Node gives as strings, repeats joined), an object
 * of optional, unconstrained string properties declared for the OpenAPI document. Such a route then
 * never loads ajv: a first deploy did, for POST /flows's documented headers (~25 ms).
 */
export function acceptsAll(schema: unknown, httpPart: string | undefined): boolean {
  if (!isObject(schema)) return false;
  if (onlyKeys(schema, ['description'])) return true;
  if (httpPart !== 'headers' || schema.type !== 'object' || !onlyKeys(schema, ['type', 'properties', 'description'])) return false;
  const properties = schema.properties ?? {};
  return isObject(properties) && Object.values(properties).every((p) => isObject(p) && p.type === 'string' && onlyKeys(p, ['type', 'description']));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(obj: Record<string, unknown>, allowed: string[]): boolean {
  return Object.keys(obj).every((k) => allowed.includes(k));
}

const acceptAll = (() => true) as unknown as Validate;

/**
 * Fastify's schema compilers, run on a route's first request instead of at start. Compiling every
 * route's ajv validators and fast-json-stringify serialisers at `ready()` took about 90 ms of the
 * time before the port answered and loaded ajv (~90 CommonJS modules) into an idle process whose
 * admin API may never see most of those routes. The real compilers get exactly the schemas and
 * options Fastify would have given them, so validation and serialisation are unchanged.
 */
export function lazySchemaCompilers(): Factories {
  let validatorSelector: ValidatorFactory | undefined;
  let serializerSelector: SerializerFactory | undefined;
  const buildValidator: ValidatorFactory = (externalSchemas, options) => {
    let compiler: ReturnType<ValidatorFactory> | undefined;
    const real = () => (compiler ??= (validatorSelector ??= (fromFastify('@fastify/ajv-compiler') as () => ValidatorFactory)())(externalSchemas, options));
    return (routeSchema) => {
      if (acceptsAll(routeSchema.schema, routeSchema.httpPart)) return acceptAll;
      let fn: Validate | undefined;
      const compiled = () => (fn ??= real()(routeSchema));
      const validate = ((data: unknown, context?: unknown) => (compiled() as (d: unknown, c?: unknown) => ReturnType<Validate>)(data, context)) as Validate;
      // Fastify reads both from the validator it was given: `errors` after a failure, `schemaEnv`
      // to hand ajv the parent object so it may coerce a root value.
      Object.defineProperties(validate, {
        errors: { get: () => compiled().errors },
        schemaEnv: { get: () => compiled().schemaEnv },
      });
      return validate;
    };
  };
  const buildSerializer: SerializerFactory = (externalSchemas, options) => {
    let compiler: ReturnType<SerializerFactory> | undefined;
    const real = () => (compiler ??= (serializerSelector ??= (fromFastify('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)())(externalSchemas, options));
    return (routeSchema) => {
      let fn: ((data: unknown) => string) | undefined;
      return (data) => (fn ??= real()(routeSchema))(data);
    };
  };
  return { buildValidator, buildSerializer } as unknown as Factories;
}
