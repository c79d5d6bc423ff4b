import path from 'node:path';
import { defaultCharset, mimeFor } from '../http-node/mime.js';

/**
 * The content types of the editor's files and which of them are worth compressing: what serving
 * them (static-files.ts) and the build's precompression (precompressed.ts) must agree on.
 */

/** Types worth compressing; images other than SVG and fonts other than the old formats are compressed already. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json|xml)|image\/svg\+xml|image\/x-icon|font\/(?:ttf|otf)|application\/vnd\.ms-fontobject)/;

/** Types the editor's files use beyond those http-in handlers name. */
const EXTRA_TYPES: Record<string, string> = { '.ttf': 'font/ttf', '.otf': 'font/otf', '.eot': 'application/vnd.ms-fontobject', '.map': 'application/json' };

export function contentTypeOf(file: string): string {
  const ext = path.extname(file).toLowerCase();
  const type = mimeFor(ext) ?? EXTRA_TYPES[ext] ?? 'application/octet-stream';
  return defaultCharset(type) ? `${type}; charset=utf-8` : type;
}

export const isCompressibleType = (type: string): boolean => COMPRESSIBLE.test(type);

/** Whether a file's type is worth compressing (the build precompresses these). */
export const isCompressibleFile = (file: string): boolean => isCompressibleType(contentTypeOf(file));
