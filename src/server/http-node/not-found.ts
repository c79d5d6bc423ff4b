import type { IncomingMessage, ServerResponse } from 'node:http';

// encodeurl: characters that may not appear raw in a URL, keeping valid %XX escapes.
const UNSAFE_URL = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|$))+/g;
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Express 4's final handler for a request no route answered (finalhandler's page and headers). */
export function sendExpressNotFound(req: IncomingMessage, res: ServerResponse, url: string): void {
  const q = url.indexOf('?');
  const pathname = (q === -1 ? url : url.slice(0, q)).replace(UNSAFE_URL, encodeURI);
  const message = `Cannot ${req.method} ${pathname}`.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
  const body = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${message}</pre>\n</body>\n</html>\n`;
  res.statusCode = 404;
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

/** A JSON `{code, message}` answer for a request no route served or could serve. */
export function sendJson(res: ServerResponse, status: number, body: { code: string; message: string }): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(text);
}
