/**
 * The template node: a mustache (or plain) template rendered against the message, written to a
 * message property or to flow/global context. `{{flow.x}}`, `{{global[store].x}}` and
 * `{{env.NAME}}` read context and environment; flow and global values are fetched before rendering
 * so asynchronous context stores work. A template that names no context renders synchronously.
 */
import type Mustache from 'mustache';
import type * as Yaml from 'js-yaml';
import { lazy } from '../base/lazy.js';
import type { ContextScope, DoneFn, Msg, NodeConfig, NodeInstance, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

interface ContextToken {
  name: string;
  scope: 'flow' | 'global';
  store: string | undefined;
  field: string;
}

const mustache = lazy<typeof Mustache>('mustache');
const yaml = lazy<typeof Yaml>('js-yaml');

const CONTEXT_TOKEN = /^(flow|global)(\[(\w+)\])?\.(.+)/;
const ENV_TOKEN = /^env\.(.+)/;

/** Every name a template refers to, sections included. */
function tokenNames(tokens: unknown[][], names = new Set<string>()): Set<string> {
  for (const token of tokens) {
    if (token[0] === 'text') continue;
    names.add(token[1] as string);
    if (token.length > 4 && Array.isArray(token[4])) tokenNames(token[4] as unknown[][], names);
  }
  return names;
}

function contextTokens(template: string): ContextToken[] {
  const out: ContextToken[] = [];
  for (const name of tokenNames(mustache().parse(template) as unknown[][])) {
    const m = CONTEXT_TOKEN.exec(name);
    if (m) out.push({ name, scope: m[1] as 'flow' | 'global', store: m[3] || undefined, field: m[4] });
  }
  return out;
}

/** JSON output must stay parseable when a value holds control characters. */
function escapeForJSON(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r').replace(/\f/g, '\\f').replace(/[\b]/g, '\\b');
}

export default function (RED: RedApi) {
  /** Mustache lookups: the message first, then prefetched context values and the environment. */
  const makeContextClass = () => class TemplateContext extends mustache().Context {
    constructor(view: unknown, parent: Mustache.Context | undefined, private readonly node: NodeInstance, private readonly escape: boolean, private readonly resolved: Map<string, unknown> | null) {
      super(view, parent);
    }

    override lookup(name: string): unknown {
      const value: unknown = super.lookup(name);
      if (value !== undefined) return this.escape && typeof value === 'string' ? escapeForJSON(value) : value;
      if (this.resolved?.has(name)) return this.resolved.get(name);
      const env = ENV_TOKEN.exec(name);
      if (env) return RED.util.getSetting(this.node, env[1]);
      return '';
    }

    /** Node-RED escapes for JSON only at the top level: values inside sections are left as they are. */
    override push(view: unknown): Mustache.Context {
      return new TemplateContext(view, this, this.node, false, this.resolved);
    }
  };
  let contextClass: ReturnType<typeof makeContextClass> | undefined;

  class TemplateNode extends RED.nodes.Node {
    field: string;
    fieldType: string;
    template: string;
    syntax: string;
    outputFormat: string;
    private readonly tokens: ContextToken[] = [];
    private readonly contextKey: { key: string; store?: string };

    constructor(config: NodeConfig) {
      super(config);
      this.field = String(config.field || 'payload');
      this.fieldType = String(config.fieldType || 'msg');
      this.template = typeof config.template === 'string' ? config.template : '';
      this.syntax = String(config.syntax || 'mustache');
      this.outputFormat = String(config.output || 'str');
      this.contextKey = RED.util.parseContextStore(this.field);
      if (this.syntax === 'mustache') {
        try {
          this.tokens = contextTokens(this.template);
        } catch (err) {
          // Reported per message too, where Node-RED reports it.
          this.error(`Invalid template: ${(err as Error).message}`);
        }
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.handle(msg, send, done));
    }

    private handle(msg: Msg, send: SendFn, done: DoneFn): void {
      // The message may carry the template only when the node has none.
      const own = this.template === '';
      const template = own && Object.prototype.hasOwnProperty.call(msg, 'template') ? String(msg.template) : this.template;
      if (this.syntax !== 'mustache') return this.output(msg, template, send, done);
      let tokens: ContextToken[];
      try {
        tokens = own ? contextTokens(template) : this.tokens;
      } catch (err) {
        done((err as Error).message);
        return;
      }
      if (tokens.length === 0) return this.render(msg, template, null, send, done);
      const resolved = new Map<string, unknown>();
      let pending = tokens.length;
      let failed = false;
      const ctx = this.context();
      for (const t of tokens) {
        (ctx[t.scope] as ContextScope).get(t.field, t.store, (err, value) => {
          if (failed) return;
          if (err) {
            failed = true;
            done(err.message);
            return;
          }
          resolved.set(t.name, value);
          if (--pending === 0) this.render(msg, template, resolved, send, done);
        });
      }
    }

    private render(msg: Msg, template: string, resolved: Map<string, unknown> | null, send: SendFn, done: DoneFn): void {
      let text: string;
      try {
        contextClass ??= makeContextClass();
        text = mustache().render(template, new contextClass(msg, undefined, this, this.outputFormat === 'json', resolved));
      } catch (err) {
        done((err as Error).message);
        return;
      }
      this.output(msg, text, send, done);
    }

    private output(msg: Msg, text: string, send: SendFn, done: DoneFn): void {
      let value: unknown = text;
      try {
        if (this.outputFormat === 'json') value = JSON.parse(text);
        else if (this.outputFormat === 'yaml') value = yaml().load(text);
      } catch (err) {
        done((err as Error).message);
        return;
      }
      if (this.fieldType === 'msg') {
        RED.util.setMessageProperty(msg, this.field, value);
        send(msg);
        done();
        return;
      }
      const scope = this.context()[this.fieldType as 'flow' | 'global'] as ContextScope;
      scope.set(this.contextKey.key, value, this.contextKey.store, (err) => {
        if (err) return done(err);
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('template', TemplateNode);
}
