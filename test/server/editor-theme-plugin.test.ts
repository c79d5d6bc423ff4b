import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { copyFixture } from '../registry/support.js';

/**
 * Node-RED 5's theme plugins: `editorTheme.theme` names a plugin of type `node-red-theme` from an
 * installed module, and the editor gets its stylesheets, scripts, header and `schemes` as Node-RED
 * 5.0.7's editor-api serves them (the fixture is node-red-contrib-theme-dusk).
 */
describe('theme plugins named by editorTheme.theme', { timeout: 120_000 }, () => {
  let server: TestServer;
  let work: string;

  before(async () => {
    work = await tempDir('runnel-theme-');
    // A file beside the module that the plugin names with ../: it must not be served.
    await writeFile(path.join(work, 'outside.js'), 'secret');
    server = await startServer({ editorTheme: { theme: 'dusk', page: { title: 'Plant floor' }, codeEditor: { options: { fontSize: 12 } } } });
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('serves the plain editor while the named theme is not installed', async () => {
    const theme = (await request(server.at('theme'))).body;
    assert.equal(theme.header.title, 'Runnel');
    assert.deepEqual(theme.themes, []);
    assert.equal((await request(server.at('settings'))).body.editorTheme.schemes, undefined);
  });

  it("applies the installed theme's stylesheet, scripts, header and schemes, under the user's own settings", async () => {
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await copyFixture('node-red-contrib-theme-dusk', work) } });
    assert.equal(installed.status, 200, installed.text);

    const theme = (await request(server.at('theme'))).body;
    assert.deepEqual(theme.themes, ['dusk']);
    assert.equal(theme.header.title, 'Runnel at dusk');
    assert.equal(theme.page.title, 'Plant floor');
    assert.deepEqual(theme.page.css, ['theme/css/dusk.css']);
    assert.deepEqual(theme.page.scripts, ['theme/scripts/dusk.js'], 'a file outside the module is left out');

    // The template escapes these URLs ({{.}}), as in Node-RED: '/' comes as &#x2F;.
    const page = (await request(server.url)).text.replaceAll('&#x2F;', '/');
    assert.match(page, /<link rel="stylesheet" href="theme\/css\/dusk\.css">/);
    assert.match(page, /<script src="theme\/scripts\/dusk\.js"><\/script>/);
    const css = await request(server.at('theme/css/dusk.css'));
    assert.equal(css.status, 200);
    assert.match(css.headers.get('content-type') ?? '', /text\/css/);
    assert.match(css.text, /#5b2a86/);
    assert.equal((await request(server.at('theme/scripts/outside.js'))).status, 404);

    const settings = (await request(server.at('settings'))).body;
    assert.equal(settings.editorTheme.theme, 'dusk');
    assert.deepEqual(settings.editorTheme.schemes, ['dark']);
    // The theme's Monaco options, the user's winning where both say something.
    assert.deepEqual(settings.codeEditor.options, { theme: 'vs-dark', fontSize: 12 });
  });

  it('goes back to the plain editor once the theme module is removed', async () => {
    assert.equal((await request(server.at('nodes/node-red-contrib-theme-dusk'), { method: 'DELETE' })).status, 204);
    const theme = (await request(server.at('theme'))).body;
    assert.equal(theme.header.title, 'Runnel');
    assert.equal(theme.page.css, undefined);
    assert.doesNotMatch((await request(server.url)).text, /dusk/);
    assert.equal((await request(server.at('theme/css/dusk.css'))).status, 404);
  });
});
