import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A dependency loaded on first use. Parsers that only some flows need (cheerio alone is ~26 MiB
 * resident) stay out of an idle runtime's memory.
 */
export function lazy<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(id) as T);
}
