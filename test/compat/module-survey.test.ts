import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { Editor } from '../helpers/comms.js';

/*
 * What the module survey found different from Node-RED 4.1.15, with the module
 * test/fixtures/shapes/node-red-contrib-shape-survey. The expected answers are Node-RED's, taken
 * from Node-RED 4.1.15 (Express 4.21) serving the same module; where Runnel answers otherwise on
 * purpose, the test says so.
 */
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/shapes/node-red-contrib-shape-survey');
const MODULE = 'node-red-contrib-shape-survey';
const TAB = 'survey';

describe('what node modules see of Runnel, as Node-RED and Express 4 show it', { timeout: 120_000 }, () => {
  let server: TestServer;
  let work: string;
  let editor: Editor;
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);
  const json = { headers: { accept: 'application/json' } };

  before(async () => {
    work = await tempDir('runnel-survey-');
    await cp(FIXTURE, path.join(work, MODULE), { recursive: true });
    server = await startServer({ logging: { level: 'info' }, httpStatic: path.join(work, MODULE, 'static') });
    editor = new Editor(server.url);
    await editor.send({ subscribe: 'notification/#' });
    const installed = await api('nodes', { method: 'POST', json: { module: path.join(work, MODULE) } });
    assert.equal(installed.status, 200, installed.text);
  });
  after(async () => {
    editor.close();
    await server.dispose();
    await removeDir(work);
  });

  const pluginSet = {
    id: `${MODULE}/survey-plugin`, name: 'survey-plugin', enabled: true, local: true, user: true, module: MODULE,
    plugins: [{ id: 'survey-plugin', type: 'survey-kind', module: MODULE }], editor: true, runtime: true, version: '1.0.0',
  };

  it('lists a module\'s plugin sets where Node-RED 4.1 does: GET /nodes/:module, /plugins/:module[/:set], /plugins/messages, plugin/added', async () => {
    const mod = await api(`nodes/${MODULE}`, json);
    assert.equal(mod.status, 200);
    assert.deepEqual(mod.body.plugins, [pluginSet]);
    assert.deepEqual(mod.body.nodes.map((n: { id: string }) => n.id), [`${MODULE}/survey-node`]);
    assert.deepEqual((await api(`plugins/${MODULE}`, json)).body, mod.body);
    assert.deepEqual((await api(`plugins/${MODULE}/survey-plugin`, json)).body, pluginSet);
    const missing = await api(`plugins/${MODULE}/nope`, json);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { code: 'not_found', message: 'Plugin not found' });
    // The editor asks for the template of a set an install announced.
    const html = await fetch(server.at(`plugins/${MODULE}/survey-plugin`), { headers: { accept: 'text/html' } });
    assert.equal(
      await html.text(),
      `\n<!-- --- [red-plugin:${MODULE}/survey-plugin] --- -->\n<script type="text/javascript">RED.plugins.registerPlugin('survey-plugin', { type: 'survey-kind' });</script>\n`,
    );
    assert.deepEqual((await api('plugins/messages?lng=en-US', json)).body, { [`${MODULE}/survey-plugin`]: { label: { hello: 'Hello from the plugin' } } });
    const [added] = await editor.waitFor('notification/plugin/added');
    assert.deepEqual(added.data, [pluginSet]);
    assert.equal((await editor.waitFor('notification/node/added'))[0].data[0].id, `${MODULE}/survey-node`);
  });

  it('res.sendFile() without a path throws Express 4\'s TypeError where it is called', async () => {
    assert.deepEqual((await api('shape-survey/no-path')).body, { name: 'TypeError', message: 'path argument is required to res.sendFile' });
    const thrown = await fetch(server.at('shape-survey/no-path-thrown'));
    assert.equal(thrown.status, 500);
    assert.match(await thrown.text(), /<pre>Internal Server Error<\/pre>/);
  });

  it('sends .js files as Express 4 does (application/javascript; charset=UTF-8): res.sendFile on RED.httpAdmin and RED.httpNode, and httpStatic', async () => {
    for (const p of ['shape-survey/static/probe.js', 'probe.js']) {
      const res = await fetch(server.at(p));
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'application/javascript; charset=UTF-8', p);
      assert.equal(await res.text(), 'window.surveyProbe = 1;\n');
    }
    const node = await fetch(new URL('shape-survey/static/probe.js', server.url));
    assert.equal(node.headers.get('content-type'), 'application/javascript; charset=UTF-8');
  });

  it('answers errors of RED.httpAdmin and RED.httpNode routes with Express\'s error page; Runnel\'s own admin API keeps JSON', async () => {
    const page = (text: string) => `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${text}</pre>\n</body>\n</html>\n`;
    const teapot = await fetch(server.at('shape-survey/teapot'));
    assert.equal(teapot.status, 418);
    assert.equal(teapot.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(teapot.headers.get('content-security-policy'), "default-src 'none'");
    assert.equal(await teapot.text(), page('Error: teapot &lt;now&gt;'));
    // Node-RED shows a server error's stack (Express in development mode); Runnel keeps it in the
    // log and shows the status text, as Express in production does.
    const thrown = await fetch(server.at('shape-survey/throw'));
    assert.equal(thrown.status, 500);
    assert.equal(await thrown.text(), page('Internal Server Error'));
    const missing = await fetch(server.at('shape-survey/static/none.js'));
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), page('Error: Not Found'), 'without the file system path Node-RED shows');
    const flowSide = await fetch(new URL('shape-survey/throw', server.url));
    assert.equal(flowSide.status, 500);
    assert.equal(await flowSide.text(), page('Internal Server Error'));
    const own = await api('nodes/no-such-module', json);
    assert.equal(own.status, 404);
    assert.equal(own.body.code, 'not_found');
  });

  it('tags a node\'s log line with its name (else its id) and keeps an error\'s "Error: " prefix, as Node-RED writes it', async () => {
    await deploy(server, [
      { id: 'in', type: 'http in', z: TAB, url: '/survey-log', method: 'get', wires: [['named', 'anon', 'out']], x: 100, y: 100 },
      { id: 'named', type: 'survey-node', z: TAB, name: 'login', wires: [], x: 200, y: 100 },
      { id: 'anon', type: 'survey-node', z: TAB, name: '', wires: [], x: 200, y: 200 },
      { id: 'out', type: 'http response', z: TAB, wires: [], x: 300, y: 100 },
    ], { api: 'v2', tab: TAB });
    assert.equal((await fetch(new URL('survey-log', server.url))).status, 200);
    const { formatLogLine } = await import('../../src/base/log-text.js');
    const lines = server.logs.filter((l) => l.includes('"type":"survey-node"')).map((l) => formatLogLine(l).replace(/^\S+ /, ''));
    assert.deepEqual(lines.sort(), [
      '[error] [survey-node:anon] Error: failed\n',
      '[error] [survey-node:login] Error: failed\n',
      '[warn] [survey-node:anon] warned\n',
      '[warn] [survey-node:login] warned\n',
    ]);
    const named = server.logs.map((l) => JSON.parse(l) as { msg: string; node?: { id: string; name?: string } }).find((l) => l.node?.id === 'named' && l.msg.startsWith('Error'));
    assert.deepEqual(named?.node, { id: 'named', type: 'survey-node', z: TAB, name: 'login', path: TAB });
    assert.equal(named?.msg, 'Error: failed');
  });
});
