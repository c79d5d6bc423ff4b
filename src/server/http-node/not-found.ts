import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';

// encodeurl: characters that may not appear raw in a URL, keeping valid %XX escapes.
const UNSAFE_URL = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|$))+/g;
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Express 4's final handler for a request no route answered (finalhandler's page and headers). */
export function sendExpressNotFound(req: IncomingMessage, res: ServerResponse, url: string): void {
  const q = url.indexOf('?');
  const pathname = (q === -1 ? url : url.slice(0, q)).replace(UNSAFE_URL, encodeURI);
  sendExpressPage(req, res, 404, `Cannot ${req.method} ${pathname}`);
}

/**
 * Express 4's final handler for an error a route handler threw or passed to `next`: the status it
 * carries (4xx/5xx, else 500) and finalhandler's page. The page shows what a client error says
 * (`Error: teapot`, the first line of the stack Node-RED shows); a server error shows only its
 * status text, as finalhandler does in production, since its stack and message stay in the log.
 */
export function sendExpressError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  const given = Number(e?.status ?? e?.statusCode);
  const status = given >= 400 && given < 600 ? given : 500;
  const shown = status < 500 && err instanceof Error ? String(err) : undefined;
  sendExpressPage(req, res, status, shown || (STATUS_CODES[status] ?? String(status)));
}

function sendExpressPage(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  const message = text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]).replace(/\n/g, '<br>').replace(/ {2}/g, ' &nbsp;');
  const body = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${message}</pre>\n</body>\n</html>\n`;
  res.statusCode = status;
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
