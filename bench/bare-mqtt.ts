/**
 * The ceiling for mqtt-pipeline: one MQTT.js client (the library both systems use) subscribed
 * to `bench/in` that republishes every message to `bench/out`, with the pipeline's QoS 0. The
 * broker is started per round after this process, so an HTTP request names it as a deploy
 * would: GET /connect?port=N answers once the subscription is in place; GET / answers 200 so the
 * harness sees the process started. Usage: node bare-mqtt.js PORT
 */
import http from 'node:http';
import mqtt from 'mqtt';

const port = Number(process.argv[2]);
let client: mqtt.MqttClient | undefined;

http
  .createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/connect') return res.end();
    client?.end(true);
    const c = (client = mqtt.connect(`mqtt://127.0.0.1:${Number(url.searchParams.get('port'))}`, { reconnectPeriod: 0 }));
    c.on('message', (_topic, payload) => c.publish('bench/out', payload, { qos: 0 }));
    c.once('error', (err) => {
      res.statusCode = 502;
      res.end(err.message);
    });
    c.once('connect', () => {
      c.subscribe('bench/in', { qos: 0 }, (err) => {
        res.statusCode = err ? 502 : 200;
        res.end(err ? err.message : 'subscribed');
      });
    });
  })
  .listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
