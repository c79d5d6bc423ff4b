/**
 * `watch`: reports changes to files and directories (comma-separated `files`, optionally
 * `recursive`) as Node-RED's does through node-watch: `event` is `update` while the path exists and
 * `remove` once it is gone, with the path's `type` and a file's `size`. Bursts of events for one
 * path within 200 ms are reported once, as node-watch's default delay does.
 */
import { statSync, watch, type FSWatcher, type Stats } from 'node:fs';
import path from 'node:path';
import type { NodeConfig, NodeInstance, RedApi } from '../runtime/red-api/red-api-types.js';

const DEBOUNCE_MS = 200;

function typeOf(stat: Stats | undefined): string {
  if (!stat) return 'none';
  if (stat.isFile()) return 'file';
  if (stat.isBlockDevice()) return 'blockdevice';
  if (stat.isCharacterDevice()) return 'characterdevice';
  if (stat.isSocket()) return 'socket';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isDirectory()) return 'directory';
  return 'n/a';
}

export default function (RED: RedApi) {
  function WatchNode(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const recursive = config.recursive === true;
    const files = String(config.files ?? '').split(',').map((f) => f.trim());
    const topic = files.length === 1 ? files[0] : JSON.stringify(files);
    const watchers: FSWatcher[] = [];
    const pending = new Map<string, ReturnType<typeof setTimeout>>();

    const report = (fpath: string) => {
      pending.delete(fpath);
      let stat: Stats | undefined;
      try {
        stat = statSync(fpath);
      } catch {
        stat = undefined;
      }
      const msg: Record<string, unknown> = { payload: fpath, topic, file: path.basename(fpath), filename: fpath, event: stat ? 'update' : 'remove' };
      if (stat?.isFile()) msg.size = stat.size;
      msg.type = typeOf(stat);
      node.send(msg);
    };

    for (const target of files) {
      let isDir = false;
      try {
        isDir = statSync(target).isDirectory();
        const watcher = watch(target, { recursive: recursive && isDir }, (_event, name) => {
          const fpath = isDir && name ? path.join(target, name.toString()) : target;
          clearTimeout(pending.get(fpath));
          pending.set(fpath, setTimeout(report, DEBOUNCE_MS, fpath));
        });
        watcher.on('error', (err) => node.error(err, { payload: '' }));
        watchers.push(watcher);
      } catch (err) {
        // Reported once the flow has started, as node-watch's error event is, so catch nodes see it.
        setImmediate(() => node.error(err, { payload: '' }));
      }
    }

    node.on('close', () => {
      for (const w of watchers) w.close();
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    });
  }
  RED.nodes.registerType('watch', WatchNode as never);
}
