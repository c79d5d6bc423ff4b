import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Writes an error answer (`{code, message}` as JSON) straight onto a socket and closes it: for the
 * places where no response object owns the socket (an upgrade request, a request whose route is
 * still waiting for its body).
 */
export function answerOnSocket(socket: Duplex, status: number, code: string, message: string, headers = ''): void {
  const body = JSON.stringify({ code, message });
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n`;
  socket.end(head + body, () => socket.destroy());
}
