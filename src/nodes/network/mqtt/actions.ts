/** The `connect` and `disconnect` actions both mqtt nodes accept in `msg.action`. */
import type { DoneFn, Msg } from '../../../runtime/red-api/red-api-types.js';
import type { MqttBrokerNode } from './broker.js';

/** Connects; `msg.broker` may change the settings first, and with `force: true` cycles a live connection. */
export function connectAction(broker: MqttBrokerNode, msg: Msg, done: DoneFn): void {
  const change = msg.broker !== null && typeof msg.broker === 'object' ? (msg.broker as Record<string, unknown>) : null;
  if (broker.canConnect()) {
    if (change) broker.setOptions(change);
    broker.connect(() => done());
  } else if (!change) done();
  else if (change.force) {
    broker.disconnect(() => {
      broker.setOptions(change);
      broker.connect(() => done());
    });
  } else done(new Error('Disconnect from broker before connecting'));
}

export function disconnectAction(broker: MqttBrokerNode, done: DoneFn): void {
  broker.disconnect(() => done());
}
