/** Node-RED's MQTT node set: `mqtt-broker`, `mqtt in`, `mqtt out`. */
import type { RedApi } from '../../../runtime/red-api/red-api-types.js';
import broker from './broker.js';
import mqttIn from './in.js';
import mqttOut from './out.js';

export default function (RED: RedApi) {
  broker(RED);
  mqttIn(RED);
  mqttOut(RED);
}
