import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';
import { flowSuite } from './flow.js';

describe('http in under a redeploy', () => {
  const flows = [
    { id: 't1', type: 'tab' },
    { id: 'in', type: 'http in', z: 't1', url: '/slow', method: 'get', x: 1, y: 1, wires: [['wait']] },
    { id: 'wait', type: 'delay', z: 't1', pauseType: 'delay', timeout: '5', timeoutUnits: 'seconds', x: 1, y: 1, wires: [['out']] },
    { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
  ];
  const t = flowSuite(() => flows);

  test('a request whose flow is redeployed under it gets 503 flow_restarted instead of hanging', async () => {
    const pending = request(t.server.at('slow'));
    await new Promise((r) => setTimeout(r, 100));
    await deploy(t.server, flows, { type: 'full' });
    const answered = await pending;
    assert.equal(answered.status, 503);
    assert.equal(answered.body.code, 'flow_restarted');
    assert.equal(answered.headers.get('retry-after'), '1');
  });
});
