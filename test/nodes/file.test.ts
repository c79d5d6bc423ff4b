import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { node, type Conf, flowSuite } from './flow.js';
import { tempDir, removeDir } from '../helpers/dirs.js';

const writer = (mode: string) => ({ filename: 'out/a.txt', filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: mode, encoding: 'none' });
const reader = (format: string, extra: Conf = {}) => ({ filename: 'out/a.txt', filenameType: 'str', format, chunk: false, sendError: true, encoding: 'none', allProps: false, ...extra });

describe('file and file in nodes', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir('runnel-files-');
  });
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'file' },
      node('write', 'file', writer('true'), [['written']]),
      node('append', 'file', writer('false'), [['written']]),
      node('delete', 'file', writer('delete'), [['written']]),
      node('by-msg', 'file', { ...writer('true'), filename: 'filename', filenameType: 'msg', appendNewline: false, encoding: 'base64' }, [['written']]),
      node('append-parts', 'file', { ...writer('false'), filename: 'out/parts.txt' }, [['written']]),
      node('utf8', 'file in', reader('utf8'), [['read']]),
      node('lines', 'file in', reader('lines', { allProps: true }), [['read']]),
      node('buffer', 'file in', reader(''), [['read']]),
      node('stream', 'file in', reader('stream'), [['read']]),
      node('write-jsonata', 'file', { ...writer('true'), filename: '"out/" & topic & ".txt"', filenameType: 'jsonata' }, [['written']]),
      node('read-jsonata', 'file in', reader('utf8', { filename: '"out/" & topic & ".txt"', filenameType: 'jsonata' }), [['read']]),
      node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
      ...['written', 'read', 'errors'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  }, () => ({ fileWorkingDirectory: dir }));
  after(() => removeDir(dir));
  const { receive } = t;

  test('write creates the directory, append adds lines, and relative names resolve against fileWorkingDirectory', async () => {
    receive('write', { _msgid: 'w1', payload: 'first' });
    await t.capture.waitFor('written', 1);
    receive('append', { _msgid: 'w2', payload: 'second' });
    receive('append', { _msgid: 'w3', payload: { k: 1 } });
    const written = await t.capture.waitFor('written', 3);
    assert.deepEqual(written, [
      { _msgid: 'w1', payload: 'first', filename: 'out/a.txt' },
      { _msgid: 'w2', payload: 'second', filename: 'out/a.txt' },
      { _msgid: 'w3', payload: { k: 1 }, filename: 'out/a.txt' },
    ]);
    assert.equal(await readFile(path.join(dir, 'out/a.txt'), 'utf8'), `first${os.EOL}second${os.EOL}{"k":1}${os.EOL}`);
  });

  test('file in reads the whole file as text, as lines with parts, and as a buffer', async () => {
    receive('utf8', { _msgid: 'r1', topic: 't' });
    const [text] = await t.capture.waitFor('read', 1);
    assert.deepEqual(text, { _msgid: 'r1', topic: 't', filename: 'out/a.txt', payload: 'first\nsecond\n{"k":1}\n' });
    receive('lines', { _msgid: 'r2', topic: 't', keep: 'me' });
    const lines = (await t.capture.waitFor('read', 5)).slice(1);
    assert.deepEqual(lines, ['first', 'second', '{"k":1}', ''].map((payload, index) => ({
      _msgid: 'r2', topic: 't', keep: 'me', filename: 'out/a.txt', payload,
      parts: index === 3 ? { index, count: 4, ch: '\n', type: 'string', id: 'r2' } : { index, ch: '\n', type: 'string', id: 'r2' },
    })));
    receive('buffer', { _msgid: 'r3' });
    const [, , , , , buffer] = await t.capture.waitFor('read', 6);
    assert.deepEqual(buffer, { _msgid: 'r3', filename: 'out/a.txt', payload: Buffer.from('first\nsecond\n{"k":1}\n') });
    receive('stream', { _msgid: 'r4', topic: 's' });
    const [, , , , , , chunk] = await t.capture.waitFor('read', 7);
    assert.deepEqual(chunk, { topic: 's', filename: 'out/a.txt', _msgid: chunk._msgid, payload: Buffer.from('first\nsecond\n{"k":1}\n'), parts: { index: 0, count: 1, ch: '', type: 'buffer', id: 'r4' } });
  });

  test('a filename from the message and an encoding', async () => {
    receive('by-msg', { _msgid: 'm1', filename: path.join(dir, 'b64.txt'), payload: 'aGVsbG8=' });
    await t.capture.waitFor('written', 4);
    assert.equal(await readFile(path.join(dir, 'b64.txt'), 'utf8'), 'hello');
  });

  test('appendNewline leaves out the newline after the last part of a string sequence', async () => {
    const parts = (index: number) => ({ id: 'seq', index, count: 2, type: 'string', ch: '\n' });
    receive('append-parts', { _msgid: 'p1', payload: 'a', parts: parts(0) });
    receive('append-parts', { _msgid: 'p2', payload: 'b', parts: parts(1) });
    receive('append-parts', { _msgid: 'p3', payload: 'c', parts: { ...parts(1), type: 'array' } });
    await t.capture.waitFor('written', 7);
    assert.equal(await readFile(path.join(dir, 'out/parts.txt'), 'utf8'), `a${os.EOL}bc${os.EOL}`);
  });

  test('delete removes the file; reading it then fails to catch nodes and to the output', async () => {
    const written = t.capture.of('written').length;
    receive('delete', { _msgid: 'd1' });
    await t.capture.waitFor('written', written + 1);
    assert.equal(existsSync(path.join(dir, 'out/a.txt')), false);
    receive('utf8', { _msgid: 'r5', payload: 'kept?' });
    const [err] = await t.capture.waitFor('errors');
    assert.equal(err._msgid, 'r5');
    assert.match(err.error.message, /ENOENT/);
    const out = await t.capture.waitFor('read', 8);
    assert.equal(out[7]._msgid, 'r5');
    assert.equal(out[7].payload, undefined);
    assert.equal(out[7].error.code, 'ENOENT');
    receive('delete', { _msgid: 'd2' });
    const [, second] = await t.capture.waitFor('errors', 2);
    assert.match(second.error.message, /^failed to delete file: Error: ENOENT/);
  });

  test('file and file in evaluate a JSONata filename per message, as Node-RED\'s file nodes do', async () => {
    const [written, read] = [t.capture.of('written').length, t.capture.of('read').length];
    receive('write-jsonata', { _msgid: 'j1', topic: 'named', payload: 'by expression' });
    const [out] = (await t.capture.waitFor('written', written + 1)).slice(written);
    assert.equal(out.filename, 'out/named.txt');
    receive('read-jsonata', { _msgid: 'j2', topic: 'named' });
    const [back] = (await t.capture.waitFor('read', read + 1)).slice(read);
    assert.equal(back.payload, `by expression${os.EOL}`);
  });
});
