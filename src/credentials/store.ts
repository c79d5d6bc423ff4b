import { isDeepStrictEqual } from 'node:util';
import { RunnelError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import type { CredentialMap, FlowNodeConfig, Storage, StoredCredentials } from '../storage/contract.js';
import { CredentialCipher } from './cipher.js';
import { applyInline, isFreeFormType, type DefinitionLookup } from './inline.js';
import { retireSystemKey, type CredentialKey } from './key.js';

/**
 * The credentials of every node, in clear, in memory. A deploy goes:
 *   const plan = store.plan(flows, topLevel);            // pure, may throw 400: nothing changed
 *   const doc = plan.changed || store.needsSave ? await store.serialise(plan.credentials) : null;
 *   await storage.saveFlows({ flows: plan.flows, credentials: doc, expectedRev });
 *   store.commit(plan.credentials);
 *   await store.saved(doc);                              // may retire the generated key
 */

export interface CredentialPlan {
  /** The complete credential map after the deploy. */
  credentials: CredentialMap;
  /** The flows with every `credentials` property stripped (shallow copies of the nodes). */
  flows: FlowNodeConfig[];
  /** Ids in the new flows that carried inline credentials or whose stored credentials changed. */
  changedNodes: Set<string>;
  /** Whether `credentials` differs from the stored map. */
  changed: boolean;
}

export interface CredentialStoreOptions {
  key: CredentialKey;
  definitionOf: DefinitionLookup;
  log: Logger;
  /** Used only to drop the generated key from the runtime config once it is no longer needed. */
  storage: Pick<Storage, 'getRuntimeConfig' | 'updateRuntimeConfig'>;
}

/**
 * A deep copy of a credential map keyed by node id, without a prototype: ids such as
 * `constructor` or `__proto__` are ordinary keys (on a plain object they read inherited members
 * or replace the prototype). structuredClone yields plain objects, hence the copy onto a null one.
 */
function idMap(source: CredentialMap = {}): CredentialMap {
  return Object.assign(Object.create(null) as CredentialMap, structuredClone(source));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class CredentialStore {
  private map: CredentialMap = idMap();
  private readonly cipher: CredentialCipher;
  /** The maps that produced each document serialise() returned, to recognise them in saved(). */
  private readonly produced = new WeakMap<StoredCredentials, CredentialMap>();
  /** The stored document is not in the format or under the key the next save would use. */
  private stale = false;
  private dirty = false;

  constructor(private readonly options: CredentialStoreOptions) {
    this.cipher = new CredentialCipher(options.key.secret, options.key.legacySecrets, options.key.format);
  }

  /** True when the next flows save should include `serialise()` even if a deploy changed nothing. */
  get needsSave(): boolean {
    return this.dirty || this.stale;
  }

  /** The stored document did not decrypt: the next flows save replaces it with what the store holds. */
  replaceOnNextSave(): void {
    this.stale = true;
  }

  /**
   * Replaces the store with the decrypted document (null = no credentials). On failure throws
   * `credentials_undecryptable` and leaves the store as it was.
   */
  async load(stored: StoredCredentials | null): Promise<void> {
    if (stored === null) {
      this.map = idMap();
      this.stale = false;
      this.dirty = false;
      return;
    }
    let decrypted;
    try {
      decrypted = await this.cipher.decrypt(stored);
    } catch (e) {
      throw new RunnelError('credentials_undecryptable', `Failed to decrypt credentials: ${(e as Error).message}`);
    }
    this.map = idMap(decrypted.map);
    this.stale = !decrypted.current;
    this.dirty = false;
  }

  /** Computes the credentials a deploy leads to, without touching the store. */
  plan(flows: FlowNodeConfig[], topLevel?: Record<string, unknown>): CredentialPlan {
    const base = topLevel !== undefined && '$' in topLevel ? idMap(this.openBlob(topLevel.$)) : idMap(this.map);
    const next: CredentialMap = base;
    const inlineIds = new Set<string>();
    const ids = new Set<string>();
    const stripped = flows.map((node) => {
      if (!isPlainObject(node)) return node;
      if (typeof node.id === 'string') ids.add(node.id);
      if (!('credentials' in node)) return node;
      const { credentials, ...rest } = node;
      if (typeof node.id === 'string' && typeof node.type === 'string' && isPlainObject(credentials)) {
        inlineIds.add(node.id);
        this.extract(next, node.id, node.type, credentials);
      }
      return rest as FlowNodeConfig;
    });
    if (topLevel !== undefined && !('$' in topLevel)) {
      for (const [id, creds] of Object.entries(topLevel)) {
        if (!isPlainObject(creds)) {
          throw new RunnelError('invalid_credentials', `The credentials of node ${id} must be an object`);
        }
        if (Object.keys(creds).length === 0) delete next[id];
        else next[id] = structuredClone(creds);
      }
    }
    for (const id of Object.keys(next)) if (!ids.has(id)) delete next[id];
    const changedNodes = new Set(inlineIds);
    // Most nodes have no credentials on either side: undefined === undefined spares a deep compare each.
    for (const id of ids) if (next[id] !== this.map[id] && !isDeepStrictEqual(next[id], this.map[id])) changedNodes.add(id);
    return { credentials: next, flows: stripped, changedNodes, changed: !isDeepStrictEqual(next, this.map) };
  }

  /**
   * The plan that restores a stored document as the complete set (a rollback): like `plan` with a
   * `$` blob. Throws `history_credentials_unreadable` when the document no longer decrypts.
   */
  async planRestore(flows: FlowNodeConfig[], stored: StoredCredentials | null): Promise<CredentialPlan> {
    let map: CredentialMap = {};
    if (stored !== null) {
      try {
        map = (await this.cipher.decrypt(stored)).map;
      } catch (e) {
        throw new RunnelError('history_credentials_unreadable', `The credentials of that revision do not decrypt: ${(e as Error).message}`);
      }
    }
    const ids = new Set(flows.map((n) => n.id));
    for (const id of Object.keys(map)) if (!ids.has(id)) delete map[id];
    const changedNodes = new Set<string>();
    for (const id of ids) if (!isDeepStrictEqual(map[id], this.map[id])) changedNodes.add(id);
    return { credentials: map, flows, changedNodes, changed: !isDeepStrictEqual(map, this.map) };
  }

  /** Which nodes' credentials a planned map adds, changes or removes (ids only, never values). */
  compare(map: CredentialMap): { added: string[]; changed: string[]; removed: string[] } {
    const added: string[] = [];
    const changed: string[] = [];
    for (const [id, creds] of Object.entries(map)) {
      if (!(id in this.map)) added.push(id);
      else if (!isDeepStrictEqual(creds, this.map[id])) changed.push(id);
    }
    return { added, changed, removed: Object.keys(this.map).filter((id) => !(id in map)) };
  }

  /** Makes a planned map the live one (after the flows were saved). */
  commit(map: CredentialMap): void {
    if (!isDeepStrictEqual(map, this.map)) this.dirty = true;
    this.map = idMap(map);
  }

  /** The document to hand to storage: `map` (default: the live map) encrypted with the current key. */
  async serialise(map: CredentialMap = this.map): Promise<StoredCredentials> {
    const snapshot = idMap(map);
    const doc = await this.cipher.encrypt(snapshot);
    this.produced.set(doc, snapshot);
    return doc;
  }

  /**
   * Call after storage accepted a save, with the credentials passed to it. Once a document from
   * serialise() is stored, nothing on disk needs the generated key any more: it is removed from
   * the runtime config when a user key (or `false`) replaced it.
   */
  async saved(doc: StoredCredentials | null): Promise<void> {
    const snapshot = doc === null ? undefined : this.produced.get(doc);
    if (snapshot === undefined) return;
    this.stale = false;
    if (isDeepStrictEqual(snapshot, this.map)) this.dirty = false;
    if (this.cipher.hasLegacySecrets) {
      await retireSystemKey(this.options.storage, this.options.log);
      this.cipher.forgetLegacySecrets();
    }
  }

  /** A deep copy of a node's credentials (what createNode attaches), or undefined. */
  get(id: string): Record<string, unknown> | undefined {
    const creds = this.map[id];
    return creds === undefined ? undefined : structuredClone(creds);
  }

  /** RED.nodes.addCredentials: replaces a node's credentials; persisted with the next save. */
  add(id: string, creds: Record<string, unknown>): void {
    this.map[id] = structuredClone(creds);
    this.dirty = true;
  }

  /** RED.nodes.deleteCredentials. */
  delete(id: string): void {
    if (!(id in this.map)) return;
    delete this.map[id];
    this.dirty = true;
  }

  /**
   * GET /credentials/:type/:id: text fields in clear, password fields as `has_<field>`; for tabs,
   * groups and subflows every key as `has_<key>`; `{}` for unknown ids and unknown types.
   */
  forEditor(type: string, id: string): Record<string, unknown> {
    const creds = this.map[id];
    if (creds === undefined) return {};
    const has = (v: unknown) => v !== undefined && v !== null && v !== '';
    const out: Record<string, unknown> = {};
    if (isFreeFormType(type) || type === 'global-config') {
      for (const [key, value] of Object.entries(creds)) out[`has_${key}`] = has(value);
      return out;
    }
    const definition = this.options.definitionOf(type);
    if (!definition) return {};
    for (const [key, field] of Object.entries(definition)) {
      if (field.type === 'password') out[`has_${key}`] = has(creds[key]);
      else out[key] = creds[key] ?? '';
    }
    return out;
  }

  private extract(next: CredentialMap, id: string, type: string, incoming: Record<string, unknown>): void {
    const result = applyInline(type, next[id] ?? {}, incoming, this.options.definitionOf);
    if (result.kind === 'ignored') {
      this.options.log.warn({ id, type }, 'Credentials ignored: the node type has no credentials definition');
      return;
    }
    if (Object.keys(result.credentials).length === 0) delete next[id];
    else next[id] = result.credentials;
  }

  /** The `$` form: the complete set, encrypted Node-RED style with the current (or a legacy) key. */
  private openBlob(blob: unknown): CredentialMap {
    try {
      if (typeof blob !== 'string') throw new Error('not a string');
      return this.cipher.openNodeRed(blob);
    } catch {
      throw new RunnelError('credentials_load_failed', 'Failed to decrypt credentials');
    }
  }
}
