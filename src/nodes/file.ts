/**
 * The `file` node (write, append or delete a file) and the `file in` node (read a file whole, as
 * lines or as chunks). Writes are serialised per node, so appends land in arrival order, and a
 * closing node finishes its queue first. Failures go to `node.error(err, msg)` so catch nodes
 * see them.
 *
 * Appends open and close the file per message instead of keeping a stream open as Node-RED does:
 * a file that is rotated or deleted between messages is then simply recreated.
 */
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeText, textDecoder, type TextChunks } from './lib/file-encoding.js';
import { resolveFilename, upgradeFilename } from './lib/file-path.js';
import type { Held } from './lib/held.js';
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

const describe = (err: unknown) => (err instanceof Error ? err.toString() : String(err));

export default function (RED: RedApi) {
  const settings = RED.settings as Record<string, unknown>;

  /**
   * The filename for a message; undefined (after reporting) when it cannot be evaluated. Through
   * the callback form, as Node-RED's file nodes do: a JSONata filename can only be evaluated so.
   */
  function filenameOf(node: NodeInstance, name: string, type: string, msg: Msg): Promise<string | undefined> {
    return new Promise((resolve) => {
      const settle = (err: unknown, value?: unknown) => {
        if (err) node.error(err, msg);
        resolve(err ? undefined : value === undefined || value === null ? '' : String(value));
      };
      try {
        RED.util.evaluateNodeProperty(name, type, node, msg, settle);
      } catch (err) {
        settle(err);
      }
    });
  }

  class FileNode extends RED.nodes.Node {
    private readonly filename: string;
    private readonly filenameType: string;
    private readonly appendNewline: boolean;
    private readonly mode: string;
    private readonly createDir: boolean;
    private readonly encoding: string;
    private readonly queue: Held[] = [];
    private drained: (() => void) | undefined;

    constructor(config: NodeConfig) {
      super(config);
      const { filename, type } = upgradeFilename(String(config.filename ?? ''), config.filenameType);
      this.filename = filename;
      this.filenameType = type;
      this.appendNewline = config.appendNewline === true || config.appendNewline === 'true';
      this.mode = String(config.overwriteFile ?? 'false');
      this.createDir = config.createDir === true || config.createDir === 'true';
      this.encoding = (config.encoding as string) || 'none';
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        this.queue.push({ msg, send, done });
        if (this.queue.length === 1) void this.drain();
      });
      this.on('close', (done: () => void) => {
        if (this.queue.length === 0) return done();
        this.drained = done;
      });
    }

    private async drain(): Promise<void> {
      while (this.queue.length) {
        const job = this.queue[0];
        try {
          await this.process(job);
        } catch (err) {
          this.error(err, job.msg);
        }
        job.done();
        this.queue.shift();
      }
      this.drained?.();
      this.drained = undefined;
    }

    private async process({ msg, send }: Held): Promise<void> {
      const filename = await filenameOf(this, this.filename, this.filenameType, msg);
      if (filename === undefined) return;
      msg.filename = filename;
      if (filename === '') {
        this.warn('No filename specified');
        return;
      }
      const full = resolveFilename(filename, settings);
      if (this.mode === 'delete') {
        try {
          await unlink(full);
        } catch (err) {
          this.error(`failed to delete file: ${describe(err)}`, msg);
          return;
        }
        send(msg);
        return;
      }
      if (msg.payload === undefined) return;
      if (this.createDir) {
        try {
          await mkdir(path.dirname(full), { recursive: true });
        } catch (err) {
          this.error(`failed to create file: ${describe(err)}`, msg);
          return;
        }
      }
      const data = this.bytes(msg);
      const overwrite = this.mode === 'true';
      try {
        if (overwrite) await writeFile(full, data);
        else await appendFile(full, data);
      } catch (err) {
        this.error(`failed to ${overwrite ? 'write' : 'append'} to file: ${describe(err)}`, msg);
        return;
      }
      send(msg);
    }

    private bytes(msg: Msg): Buffer {
      let data = msg.payload;
      if (typeof data === 'object' && data !== null && !Buffer.isBuffer(data)) data = JSON.stringify(data);
      else if (!Buffer.isBuffer(data)) data = String(data);
      // The last part of a split string already ended where its separator was: no newline after it.
      if (this.appendNewline && !Buffer.isBuffer(data) && !endsStringSequence(msg.parts)) data += os.EOL;
      const encoding = this.encoding === 'setbymsg' ? (msg.encoding as string) || 'none' : this.encoding;
      return encodeText(data, encoding);
    }
  }

  class FileInNode extends RED.nodes.Node {
    private readonly filename: string;
    private readonly filenameType: string;
    private readonly format: string;
    private readonly encoding: string;
    private readonly allProps: boolean;
    private readonly sendError: boolean;

    constructor(config: NodeConfig) {
      super(config);
      const { filename, type } = upgradeFilename(String(config.filename ?? ''), config.filenameType);
      this.filename = filename;
      this.filenameType = type;
      this.format = (config.format as string) || '';
      this.encoding = (config.encoding as string) || 'none';
      this.allProps = config.allProps === true || config.allProps === 'true';
      this.sendError = config.sendError === undefined ? true : config.sendError === true || config.sendError === 'true';
      this.on('input', async (msg: Msg, send: SendFn, done: DoneFn) => {
        const raw = await filenameOf(this, this.filename, this.filenameType, msg);
        if (raw === undefined) return done();
        const filename = raw.replace(/\t|\r|\n/g, '');
        if (filename === '') {
          this.warn('No filename specified');
          return done();
        }
        msg.filename = filename;
        this.read(resolveFilename(filename, settings), msg, send).then(
          () => done(),
          (err) => {
            this.error(err, msg);
            if (this.sendError) {
              const m: Msg = RED.util.cloneMessage(msg);
              delete m.payload;
              m.error = err;
              send(m);
            }
            done();
          },
        );
      });
    }

    private read(file: string, msg: Msg, send: SendFn): Promise<void> {
      return new Promise((resolve, reject) => {
        const stream = createReadStream(file);
        const chunks: Buffer[] = [];
        const lines = this.format === 'lines' ? this.lineSplitter(msg, send) : undefined;
        let held: Buffer | undefined;
        let index = 0;
        stream.on('data', (chunk) => {
          const buf = chunk as Buffer;
          if (lines) lines.write(buf);
          else if (this.format === 'stream') {
            // One chunk is held back so the last one can carry parts.count.
            if (held) send(this.piece(msg, held, { index: index++, ch: '', type: 'buffer', id: msg._msgid }));
            held = buf;
          } else chunks.push(buf);
        });
        stream.on('error', reject);
        stream.on('end', () => {
          if (lines) lines.end();
          else if (this.format === 'stream') {
            if (held) send(this.piece(msg, held, { index, ch: '', type: 'buffer', id: msg._msgid, count: index + 1 }));
          } else {
            const data = Buffer.concat(chunks);
            if (this.format === 'utf8') {
              const decoder = textDecoder(this.encoding);
              msg.payload = decoder.write(data) + decoder.end();
            } else msg.payload = data;
            send(msg);
          }
          resolve();
        });
      });
    }

    /** Sends one message per line; the text after the last newline is the final line. */
    private lineSplitter(msg: Msg, send: SendFn): { write(chunk: Buffer): void; end(): void } {
      const decoder: TextChunks = textDecoder(this.encoding);
      let spare = '';
      let index = 0;
      const parts = (extra: Record<string, unknown>) => ({ index: index++, ...extra, ch: '\n', type: 'string', id: msg._msgid });
      return {
        write: (chunk) => {
          const bits = (spare + decoder.write(chunk)).split('\n');
          spare = bits.pop() as string;
          for (const line of bits) send(this.piece(msg, line, parts({})));
        },
        end: () => {
          const bits = (spare + decoder.end()).split('\n');
          spare = bits.pop() as string;
          for (const line of bits) send(this.piece(msg, line, parts({})));
          send(this.piece(msg, spare, parts({ count: index + 1 })));
        },
      };
    }

    private piece(msg: Msg, payload: unknown, parts: Record<string, unknown>): Msg {
      let m: Msg;
      if (this.allProps) m = RED.util.cloneMessage({ ...msg, payload: undefined });
      else {
        // Node-RED's shape and key order: topic (even when undefined), filename, payload, parts.
        m = { topic: msg.topic, filename: msg.filename };
      }
      m.payload = payload;
      m.parts = parts;
      return m;
    }
  }

  RED.nodes.registerType('file', FileNode);
  RED.nodes.registerType('file in', FileInNode);
}

function endsStringSequence(parts: unknown): boolean {
  const p = parts as { type?: unknown; count?: unknown; index?: unknown } | undefined;
  return !!p && p.type === 'string' && p.count === (p.index as number) + 1;
}
