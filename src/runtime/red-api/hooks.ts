/** The hook points Node-RED defines; anything else is refused, as in Node-RED. */
const MESSAGE_HOOKS = ['onSend', 'preRoute', 'preDeliver', 'postDeliver', 'onReceive', 'postReceive', 'onComplete'] as const;
const MODULE_HOOKS = ['preInstall', 'postInstall', 'preUninstall', 'postUninstall'] as const;
export type HookName = (typeof MESSAGE_HOOKS)[number] | (typeof MODULE_HOOKS)[number];

const VALID = new Set<string>([...MESSAGE_HOOKS, ...MODULE_HOOKS]);

/**
 * A hook callback: `fn(payload)` may return a promise or `false` (halt the chain); `fn(payload, done)`
 * calls `done()` to continue, `done(false)` to halt or `done(err)` to fail.
 */
export type HookFn = (payload: any, done?: (result?: unknown) => void) => unknown;

/** `done` of trigger(): undefined = every hook passed, false = a hook halted, else the error. */
export type HookDone = (result?: unknown) => void;

/** Which messages a hook is for: one added with it ignores every other message (Hooks.add). */
export type MessageFilter = (msg: Record<string, any>) => boolean;

interface Entry {
  label: string | undefined;
  fn: HookFn;
  only: MessageFilter | undefined;
}

/**
 * RED.hooks: Node-RED's hook registry (`add("onSend.label", fn)`, `remove`, `has`, `trigger`).
 * `active` holds one boolean per hook point, so the message path tests
 * `hooks.active.onSend` without a lookup or allocation when no hook is registered.
 */
export class Hooks {
  readonly active: Record<HookName, boolean> = Object.fromEntries([...VALID].map((n) => [n, false])) as Record<HookName, boolean>;
  /** True while a message hook (onSend … onComplete) for every message is registered: one test for the whole path. */
  anyMessageHook = false;
  /** The filters of the message hooks registered for some messages only; the path asks them per message. */
  filters: MessageFilter[] = [];
  private readonly entries = new Map<HookName, Entry[]>();

  /**
   * `only` (the runtime's own hooks, not RED.hooks): the hook is for the messages it accepts and
   * ignores the rest, so those messages keep the hook-free path.
   */
  add(hookId: string, fn: HookFn, only?: MessageFilter): void {
    const { id, label } = parseHookId(hookId);
    if (!VALID.has(id)) throw new Error(`Invalid hook '${id}'`);
    if (typeof fn !== 'function') throw new Error(`Hook ${hookId} must be a function`);
    const list = this.entries.get(id as HookName) ?? [];
    if (label !== undefined && list.some((e) => e.label === label)) throw new Error(`Hook ${hookId} already registered`);
    // Copy on write: a trigger already running keeps walking the list it started with.
    this.entries.set(id as HookName, [...list, { label, fn, only }]);
    this.refresh(id as HookName);
  }

  /** `remove("onSend.label")` or `remove("*.label")`; unlabelled hooks cannot be removed. */
  remove(hookId: string): void {
    const { id, label } = parseHookId(hookId);
    if (label === undefined) throw new Error('Cannot remove hook without label');
    const names = id === '*' ? [...this.entries.keys()] : [id as HookName];
    for (const name of names) {
      const list = this.entries.get(name);
      if (!list) continue;
      this.entries.set(name, list.filter((e) => e.label !== label));
      this.refresh(name);
    }
  }

  /** `has("onSend")`: any hook on that point; `has("onSend.label")`: that labelled hook. */
  has(hookId: string): boolean {
    const { id, label } = parseHookId(hookId);
    if (label === undefined) return this.active[id as HookName] === true;
    return this.entries.get(id as HookName)?.some((e) => e.label === label) ?? false;
  }

  /** Whether a message takes the hooked path: a hook for every message, or one whose filter accepts it. */
  follows(msg: Record<string, any>): boolean {
    if (this.anyMessageHook) return true;
    for (const only of this.filters) if (only(msg)) return true;
    return false;
  }

  /** follows() for what a node sends: a message, or arrays of them per output. */
  followsAny(sent: unknown): boolean {
    if (this.anyMessageHook) return true;
    if (this.filters.length === 0 || sent === null || typeof sent !== 'object') return false;
    if (!Array.isArray(sent)) return this.follows(sent as Record<string, any>);
    return sent.some((out) => this.followsAny(out));
  }

  /** Removes every hook (runtime stop, tests). */
  clear(): void {
    this.entries.clear();
    for (const name of VALID) this.refresh(name as HookName);
  }

  /**
   * Runs the hooks of one point in registration order. With `done`, reports through it (possibly
   * synchronously); without, returns a promise that rejects with the error or with `false` when a
   * hook halted the chain.
   */
  trigger(hookId: HookName, payload: unknown, done: HookDone): void;
  trigger(hookId: HookName, payload: unknown): Promise<void>;
  trigger(hookId: HookName, payload: unknown, done?: HookDone): void | Promise<void> {
    const list = this.entries.get(hookId);
    if (!done) {
      return new Promise((resolve, reject) => {
        this.trigger(hookId, payload, (result) => (result === undefined ? resolve() : reject(result)));
      });
    }
    if (!list || list.length === 0) {
      done();
      return;
    }
    runChain(list, payload, done);
  }

  private refresh(name: HookName): void {
    const list = this.entries.get(name);
    if (list && list.length === 0) this.entries.delete(name);
    this.active[name] = (list?.length ?? 0) > 0;
    const messageHooks = MESSAGE_HOOKS.flatMap((n) => this.entries.get(n) ?? []);
    this.anyMessageHook = messageHooks.some((e) => !e.only);
    this.filters = [...new Set(messageHooks.flatMap((e) => (e.only ? [e.only] : [])))];
  }
}

function runChain(list: Entry[], payload: unknown, done: HookDone): void {
  let i = 0;
  const next = (result?: unknown): void => {
    if (result !== undefined) {
      done(result);
      return;
    }
    if (i >= list.length) {
      done();
      return;
    }
    const fn = list[i++].fn;
    try {
      if (fn.length >= 2) {
        fn(payload, next);
        return;
      }
      const out = fn(payload);
      if (out === false) done(false);
      else if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then((r) => next(r), (err) => done(err ?? new Error('hook rejected')));
      else next();
    } catch (err) {
      done(err);
    }
  };
  next();
}

function parseHookId(hookId: string): { id: string; label: string | undefined } {
  if (typeof hookId !== 'string') throw new Error('Invalid hook id');
  const dot = hookId.indexOf('.');
  if (dot === -1) return { id: hookId, label: undefined };
  return { id: hookId.slice(0, dot), label: hookId.slice(dot + 1) };
}
