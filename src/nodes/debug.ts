import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { inspect } from 'node:util';
import type { DoneFn, Msg, NodeConfig, NodeStatus, PreparedJSONata, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import type { AdminRequest, AdminResponse } from './lib/admin-route.js';

/** The debug sidebar's pop-out window and its scripts ship with Node-RED's debug node. */
const VIEW_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@node-red/nodes/package.json')), 'core', 'common', 'lib', 'debug');
const VIEW_FILES: Record<string, string> = { 'view.html': 'text/html', 'debug-utils.js': 'application/javascript', 'debug.js': 'application/javascript' };

/** Longest status text before Node-RED truncates it with "...". */
const STATUS_LENGTH = 32;
/**
 * The editor's sidebar shows one message per 15 ms (about 66 a second) and keeps only the newest
 * 100 it has not shown yet: whatever a node sends beyond that is encoded, carried and thrown away
 * by the browser. So each node sends at most SIDEBAR_BURST messages per SIDEBAR_WINDOW_MS (a burst
 * the size of the editor's backlog passes whole) and, after a flood, the newest message it held
 * back, so the sidebar ends on the flood's last value.
 */
const SIDEBAR_BURST = 100;
const SIDEBAR_WINDOW_MS = 1000;

const hasOwn = (o: unknown, k: string) => typeof o === 'object' && o !== null && Object.prototype.hasOwnProperty.call(o, k);

/**
 * The debug node. Sidebar output goes to `RED.comms.publish('debug', …)`, which lands on the
 * runtime events as `comms` for whatever streams it (Node-RED's websocket topic `debug`). Only
 * "to console" (`console: "true"`) writes to the log, as in Node-RED: sidebar output is often
 * secrets and whole messages a user looks at once, not what an operator's log should keep.
 */
export default function (RED: RedApi) {
  const maxLength = typeof RED.settings.debugMaxLength === 'number' ? RED.settings.debugMaxLength : 1000;
  const statusLength = Number(RED.settings.debugStatusLength) || STATUS_LENGTH;

  function evaluate(exp: PreparedJSONata, msg: Msg): Promise<unknown> {
    return new Promise((resolve, reject) => RED.util.evaluateJSONataExpression(exp, msg, (err, v) => (err ? reject(err) : resolve(v))));
  }

  class DebugNode extends RED.nodes.Node {
    active: boolean;
    tosidebar: boolean;
    console: string;
    tostatus: boolean;
    /** `"true"` for the whole message, otherwise a message property (null with a JSONata target). */
    complete: string | null;
    targetType: string;
    statusType: string;
    statusVal: string;
    private readonly expression: PreparedJSONata | null = null;
    private readonly statusExpression: PreparedJSONata | null = null;
    private readonly invalidExpression: string;
    /** The last status shown, as JSON: Node-RED only sends a status that changed. */
    private lastStatus = '{}';
    /** statusType "counter": messages seen, and when the last one came. */
    private counter = 0;
    private lastCount = Date.now();
    private counterTimer: ReturnType<typeof setTimeout> | undefined;
    /** The sidebar's rate window: when it opened, what it let through, the newest message held back. */
    private windowStart = 0;
    private windowSent = 0;
    private held: { topic: unknown; property: string | undefined; value: unknown } | undefined;
    private heldTimer: ReturnType<typeof setTimeout> | undefined;

    constructor(config: NodeConfig) {
      super(config);
      const jsonataTarget = config.targetType === 'jsonata';
      let complete = String(config.complete || 'payload');
      if (complete === 'false') complete = 'payload';
      this.complete = jsonataTarget ? null : complete;
      this.targetType = typeof config.targetType === 'string' && config.targetType ? config.targetType : complete === 'true' ? 'full' : 'msg';
      this.console = String(config.console || false);
      this.tostatus = config.tostatus === true;
      this.statusType = typeof config.statusType === 'string' && config.statusType ? config.statusType : 'auto';
      this.statusVal = typeof config.statusVal === 'string' && config.statusVal ? config.statusVal : complete;
      this.tosidebar = config.tosidebar === undefined ? true : config.tosidebar === true || config.tosidebar === 'true';
      this.active = config.active === null || config.active === undefined || config.active === true || config.active === 'true';
      // Node-RED names the target expression in every JSONata failure, the status one's included.
      this.invalidExpression = `Invalid JSONata expression: ${jsonataTarget ? complete : null}`;
      try {
        if (jsonataTarget) this.expression = RED.util.prepareJSONataExpression(complete, this);
        if (this.statusType === 'jsonata') this.statusExpression = RED.util.prepareJSONataExpression(this.statusVal, this);
      } catch {
        // Node-RED then leaves the node without an input handler.
        this.error(this.invalidExpression);
        return;
      }
      if (this.statusType === 'counter') this.showCount();
      this.on('input', (msg: Msg, _send: SendFn, done: DoneFn) => this.handle(msg, done));
      this.on('close', () => {
        clearTimeout(this.counterTimer);
        clearTimeout(this.heldTimer);
        this.held = undefined;
        if (this.tostatus) this.status({});
      });
    }

    /** An inactive node still shows status and writes to the console; only the sidebar is off. */
    private handle(msg: Msg, done: DoneFn): void | Promise<void> {
      // A status node watching this debug node must not feed it its own status forever.
      if (hasOwn(msg, 'status') && (msg.status as { source?: { id?: string } }).source?.id === this.id) {
        done();
        return;
      }
      if (this.expression || this.statusExpression) return this.handleAsync(msg, done);
      const property = this.complete === 'true' ? undefined : (this.complete as string);
      const value = property === undefined ? msg : this.read(msg, property);
      if (this.tostatus) {
        if (this.statusType === 'counter') this.count();
        else this.showStatus(msg, this.statusValue(msg, value));
      }
      this.output(msg, property, value);
      done();
    }

    private async handleAsync(msg: Msg, done: DoneFn): Promise<void> {
      const property = this.expression ? undefined : this.complete === 'true' ? undefined : (this.complete as string);
      let value: unknown;
      let failed = false;
      try {
        value = this.expression ? await evaluate(this.expression, msg) : property === undefined ? msg : this.read(msg, property);
      } catch {
        failed = true;
      }
      if (this.tostatus) {
        if (this.statusType === 'counter') this.count();
        else if (this.statusType === 'auto' && failed) this.error(this.invalidExpression);
        else {
          try {
            this.showStatus(msg, this.statusExpression ? await evaluate(this.statusExpression, msg) : this.statusValue(msg, value));
          } catch {
            this.error(this.invalidExpression);
          }
        }
      }
      if (failed) {
        // Node-RED reports it and leaves the message undone.
        this.error(this.invalidExpression);
        return;
      }
      this.output(msg, property, value);
      done();
    }

    private read(msg: Msg, property: string): unknown {
      try {
        return RED.util.getMessageProperty(msg, property);
      } catch {
        return undefined;
      }
    }

    private statusValue(msg: Msg, value: unknown): unknown {
      if (this.statusType === 'auto') return this.complete === 'true' ? msg.payload : value;
      return this.read(msg, this.statusVal);
    }

    /** Counts messages; bursts closer than 100 ms update the status once they pause for 200 ms. */
    private count(): void {
      const now = Date.now();
      const gap = now - this.lastCount;
      this.lastCount = now;
      this.counter++;
      clearTimeout(this.counterTimer);
      this.counterTimer = undefined;
      if (gap > 100) this.showCount();
      else this.counterTimer = setTimeout(() => this.showCount(), 200);
    }

    /** The count as a number, as Node-RED shows it. */
    private showCount(): void {
      this.status({ fill: 'blue', shape: 'ring', text: this.counter as unknown as string });
    }

    private showStatus(msg: Msg, value: unknown): void {
      let fill = 'grey';
      let shape = 'dot';
      let text = typeof value === 'string' ? value : inspect(value);
      const v = value as NodeStatus | null;
      if (typeof value === 'object' && v?.fill && v.shape && v.text) {
        fill = v.fill;
        shape = v.shape;
        text = String(v.text);
      }
      if (this.statusType === 'auto') {
        if (hasOwn(msg, 'error')) {
          fill = 'red';
          text = String((msg.error as { message?: unknown })?.message ?? msg.error);
        }
        if (hasOwn(msg, 'status')) {
          const s = (msg.status ?? {}) as NodeStatus;
          fill = s.fill || 'grey';
          shape = s.shape || 'ring';
          text = String(s.text || '');
        }
      }
      if (text.length > statusLength) text = `${text.substring(0, statusLength)}...`;
      const status = { fill, shape, text } as NodeStatus;
      const json = JSON.stringify(status);
      if (json === this.lastStatus) return;
      this.lastStatus = json;
      this.status(status);
    }

    private output(msg: Msg, property: string | undefined, value: unknown): void {
      if (this.console === 'true') {
        this.log(typeof value === 'string' ? (value.includes('\n') ? `\n${value}` : value) : `${typeof value === 'object' ? '\n' : ''}${inspect(value, { depth: 10 })}`);
      }
      if (!this.active || !this.tosidebar) return;
      const now = Date.now();
      if (now - this.windowStart >= SIDEBAR_WINDOW_MS) {
        this.windowStart = now;
        this.windowSent = 0;
      }
      if (this.windowSent >= SIDEBAR_BURST) {
        this.held = { topic: msg.topic, property, value };
        this.heldTimer ??= setTimeout(() => this.releaseHeld(), this.windowStart + SIDEBAR_WINDOW_MS - now);
        return;
      }
      this.windowSent++;
      this.toSidebar(msg.topic, property, value);
    }

    /** The window closed on a flood: its newest message opens the next one. */
    private releaseHeld(): void {
      this.heldTimer = undefined;
      const held = this.held;
      this.held = undefined;
      if (!held || !this.active) return;
      this.windowStart = Date.now();
      this.windowSent = 1;
      this.toSidebar(held.topic, held.property, held.value);
    }

    private toSidebar(topic: unknown, property: string | undefined, value: unknown): void {
      const entry: Record<string, unknown> = {
        id: this.id, z: this.z, _alias: this._alias, path: this._flow.path, name: this.name, topic,
      };
      if (property !== undefined) entry.property = property;
      entry.msg = value;
      RED.comms.publish('debug', RED.util.encodeObject(entry, { maxLength }));
    }
  }

  RED.nodes.registerType('debug', DebugNode);

  const admin = RED.httpAdmin;
  // A runtime without an HTTP server has no editor to answer.
  if (!admin) return;
  // The sidebar's enable/disable buttons: 200 when enabled, 201 when disabled, as Node-RED answers.
  const setActive = (id: unknown, active: boolean) => {
    const node = typeof id === 'string' ? RED.nodes.getNode(id) : undefined;
    if (!(node instanceof DebugNode)) return false;
    node.active = active;
    return true;
  };
  const state = (value: string) => (value === 'enable' ? true : value === 'disable' ? false : undefined);
  admin.post('/debug/:state', RED.auth.needsPermission('debug.write'), (req: AdminRequest, res: AdminResponse) => {
    const active = state(req.params.state);
    const nodes = (req.body as { nodes?: unknown } | undefined)?.nodes;
    if (active === undefined) res.status(404).json({ code: 'not_found', message: 'Use enable or disable' });
    else if (!Array.isArray(nodes)) res.status(400).json({ code: 'invalid_request', message: 'Send {nodes: [id, ...]}' });
    else {
      for (const id of nodes) setActive(id, active);
      res.sendStatus(active ? 200 : 201);
    }
  });
  admin.post('/debug/:id/:state', RED.auth.needsPermission('debug.write'), (req: AdminRequest, res: AdminResponse) => {
    const active = state(req.params.state);
    if (active === undefined) res.status(404).json({ code: 'not_found', message: 'Use enable or disable' });
    else if (!setActive(req.params.id, active)) res.status(404).json({ code: 'not_found', message: `No debug node ${req.params.id}` });
    else res.sendStatus(active ? 200 : 201);
  });
  admin.get('/debug/view/:file', (req: AdminRequest, res: AdminResponse) => {
    const type = Object.hasOwn(VIEW_FILES, req.params.file) ? VIEW_FILES[req.params.file] : undefined;
    if (!type) {
      res.status(404).json({ code: 'not_found', message: 'No such file' });
      return;
    }
    readFile(path.join(VIEW_DIR, req.params.file), 'utf8').then(
      (text) => res.type(type).send(text),
      () => res.status(404).json({ code: 'not_found', message: 'No such file' }),
    );
  });
}
