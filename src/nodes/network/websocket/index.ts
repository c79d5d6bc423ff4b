/** Node-RED's WebSocket node set: `websocket-listener`, `websocket-client`, `websocket in`, `websocket out`. */
import type { RedApi } from '../../../runtime/red-api/red-api-types.js';
import endpoint from './endpoint.js';
import io from './io.js';

export default function (RED: RedApi) {
  endpoint(RED);
  io(RED);
}
