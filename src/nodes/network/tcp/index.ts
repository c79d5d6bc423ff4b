/** Node-RED's TCP node set: `tcp in`, `tcp out`, `tcp request`, sharing one socket pool for replies. */
import type { RedApi } from '../../../runtime/red-api/red-api-types.js';
import tcpIn from './in.js';
import tcpOut from './out.js';
import tcpRequest from './request.js';
import { tcpContext } from './shared.js';

export default function (RED: RedApi) {
  const ctx = tcpContext(RED);
  tcpIn(ctx);
  tcpOut(ctx);
  tcpRequest(ctx);
}
