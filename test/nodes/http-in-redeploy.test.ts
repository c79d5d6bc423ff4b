import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

test('a request whose flow is redeployed under it gets 503 flow_restarted instead of hanging', async () => {
  const server = await startServer();
  try {
    const flows = [
      { id: 't1', type: 'tab' },
      { id: 'in', type: 'http in', z: 't1', url: '/slow', method: 'get', x: 1, y: 1, wires: [['wait']] },
      { id: 'wait', type: 'delay', z: 't1', pauseType: 'delay', timeout: '5', timeoutUnits: 'seconds', x: 1, y: 1, wires: [['out']] },
      { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
    ];
    await deploy(server, flows);
    const pending = request(server.at('slow'));
    await new Promise((r) => setTimeout(r, 100));
    await deploy(server, flows, { type: 'full' });
    const answered = await pending;
    assert.equal(answered.status, 503);
    assert.equal(answered.body.code, 'flow_restarted');
    assert.equal(answered.headers.get('retry-after'), '1');
  } finally {
    await server.dispose();
  }
});
