import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../../helpers/server.js';
import { installCapture } from '../../../helpers/capture.js';
import { deploy } from '../../../helpers/deploy.js';

test('a whole ${ENV} node property and typed env values resolve through the tab env, then process.env', async () => {
  process.env.RUNNEL_TEST_OUTER = 'outer';
  const server = await startServer();
  const capture = installCapture(server);
  try {
    const flows = [
      { id: 't1', type: 'tab', env: [{ name: 'GREETING', value: 'hi', type: 'str' }, { name: 'COUNT', value: '3', type: 'num' }] },
      {
        id: 'c', type: 'change', z: 't1', x: 1, y: 1, wires: [['out']],
        rules: [
          { t: 'set', p: 'payload', pt: 'msg', to: '${GREETING}', tot: 'str' },
          { t: 'set', p: 'outer', pt: 'msg', to: '$(RUNNEL_TEST_OUTER)', tot: 'str' },
          { t: 'set', p: 'text', pt: 'msg', to: '${GREETING} from ${RUNNEL_TEST_OUTER}', tot: 'str' },
          { t: 'set', p: 'unset', pt: 'msg', to: '${RUNNEL_TEST_NOT_SET}', tot: 'str' },
          { t: 'set', p: 'count', pt: 'msg', to: 'COUNT', tot: 'env' },
          { t: 'set', p: 'whole', pt: 'msg', to: '${COUNT}', tot: 'str' },
        ],
      },
      { id: 'out', type: 'test-capture', name: 'out', z: 't1', x: 1, y: 1, wires: [] },
    ];
    await deploy(server, flows);
    server.instance.runtime.services.nodes.get('c')!.receive({});
    const [msg] = await capture.waitFor('out');
    assert.equal(msg.payload, 'hi');
    assert.equal(msg.outer, 'outer', 'the older $(X) form');
    assert.equal(msg.text, '${GREETING} from ${RUNNEL_TEST_OUTER}', 'only whole values are substituted, as in Node-RED');
    assert.equal(msg.unset, '${RUNNEL_TEST_NOT_SET}', 'a variable that is not set leaves the text as written');
    assert.equal(msg.count, 3);
    assert.equal(msg.whole, '3', 'the str type turns the substituted number back into text, as in Node-RED');
  } finally {
    delete process.env.RUNNEL_TEST_OUTER;
    await server.dispose();
  }
});
