import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { RUNNEL_VERSION } from '../../src/base/version.js';

const require = createRequire(import.meta.url);
const CLIENT_VERSION = (require('@node-red/editor-client/package.json') as { version: string }).version;

/**
 * What the Node-RED 5 editor reads from the server before it draws anything: the version it checks
 * modules against, the page and header it shows (Runnel's names unless the user chose others) and
 * the bootstrap script of the code editor the settings pick.
 */
describe('the Node-RED 5 editor theme and version', { timeout: 120_000 }, () => {
  const servers: TestServer[] = [];
  const start = async (raw: Record<string, unknown>) => {
    const server = await startServer(raw);
    servers.push(server);
    return server;
  };
  let plain: TestServer;

  before(async () => {
    plain = await start({});
  });
  after(async () => {
    for (const s of servers) await s.dispose();
  });

  it('reports the version of the editor it serves as the Node-RED version, and its own as runnel.version', async () => {
    assert.match(CLIENT_VERSION, /^5\.0\.\d+$/);
    const settings = (await request(plain.at('settings'))).body;
    assert.equal(settings.version, CLIENT_VERSION);
    assert.deepEqual(settings.runnel, { version: RUNNEL_VERSION });
  });

  it('says Runnel in the page title and the header by default, with the 5.x header icon', async () => {
    const page = await request(plain.url);
    assert.match(page.text, /<title>Runnel<\/title>/);
    const theme = (await request(plain.at('theme'))).body;
    assert.equal(theme.page.title, 'Runnel');
    assert.deepEqual(theme.header, { title: 'Runnel', image: 'red/images/node-red-icon.svg' });
    assert.equal((await request(plain.at(theme.header.image))).status, 200);
  });

  it("lets the user's editorTheme page and header titles win", async () => {
    const own = await start({ editorTheme: { page: { title: 'Plant floor' }, header: { title: 'Line 3' } } });
    assert.match((await request(own.url)).text, /<title>Plant floor<\/title>/);
    assert.equal((await request(own.at('theme'))).body.header.title, 'Line 3');
  });

  it('loads Monaco by default, the Ace bootstrap for lib "ace", and neither for the basic editor', async () => {
    const scripts = (html: string) => [...html.matchAll(/<script id="(\w+-bootstrap)" src="([^"?]+)/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(scripts((await request(plain.url)).text), [['monaco-bootstrap', 'vendor/monaco/monaco-bootstrap.js']]);
    const ace = await start({ editorTheme: { codeEditor: { lib: 'ace' } } });
    const acePage = (await request(ace.url)).text;
    assert.deepEqual(scripts(acePage), [['ace-bootstrap', 'vendor/ace/ace-bootstrap.js']]);
    assert.doesNotMatch(acePage, /vendor\/monaco\/style\.css/);
    assert.equal((await request(ace.at('vendor/ace/ace-bootstrap.js'))).status, 200);
    assert.equal((await request(ace.at('theme'))).body.asset.vendorAce, 'vendor/ace/ace-bootstrap.js');
    const basic = await start({ editorTheme: { codeEditor: { lib: 'basic' } } });
    assert.deepEqual(scripts((await request(basic.url)).text), []);
  });

  it("serves every message catalog with i18next v4 plural keys (_other), as Node-RED renames Node-RED's _plural ones", async () => {
    const plurals = (text: string) => [...text.matchAll(/"(\w+)_(plural|other)"/g)].map((m) => m[2]);
    const editor = await request(plain.at('locales/editor?lng=en-US'));
    assert.equal(editor.body.palette.editor.pluginCount_other, '__count__ plugins');
    assert.equal(editor.body.palette.editor.pluginCount, '__count__ plugin');
    for (const ns of ['editor', 'node-red']) {
      const found = plurals((await request(plain.at(`locales/${ns}?lng=en-US`))).text);
      assert.ok(found.length > 0 && found.every((p) => p === 'other'), `${ns}: ${found.join(',')}`);
    }
    const messages = (await request(plain.at('nodes/messages?lng=en-US'))).text;
    assert.ok(plurals(messages).every((p) => p === 'other'));
  });

  it('passes the login message and button of editorTheme.login to the login dialog', async () => {
    const server = await start({ editorTheme: { login: { message: 'Authorised staff only', button: { label: 'Sign in' } } } });
    assert.deepEqual((await request(server.at('theme'))).body.login, { message: 'Authorised staff only', button: { label: 'Sign in' } });
  });
});
