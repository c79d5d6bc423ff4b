/**
 * msg.headers of an http request node's output carry a fingerprint, so that an http response or
 * request node further on can tell the headers are the earlier response's, unchanged, and must
 * not be sent again (Node-RED's rule).
 */
const MARK = 'x-node-red-request-node';

/** FNV-1a over the JSON text: cheap, and only compared with itself. */
function fingerprint(headers: Record<string, unknown>): string {
  const text = JSON.stringify(headers);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

export function markResponseHeaders(headers: Record<string, unknown>): void {
  headers[MARK] = fingerprint(headers);
}

/** Removes the mark; true when the headers are still the marked response's, unchanged. */
export function takeResponseMark(headers: Record<string, unknown>): boolean {
  if (!Object.hasOwn(headers, MARK)) return false;
  const mark = headers[MARK];
  delete headers[MARK];
  return mark === fingerprint(headers);
}
