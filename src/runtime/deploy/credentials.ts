import type { Settings } from '../../settings/settings.js';
import type { Logger } from '../../base/log.js';
import type { FlowNodeConfig, Storage, StoredCredentials } from '../../storage/contract.js';
import type { SerialQueue } from '../../base/serial-queue.js';
import { storedCredentialsName } from '../../storage/index.js';
import { RunnelError } from '../../base/errors.js';
import type { Registry } from '../../registry/registry.js';
import { CredentialStore } from '../../credentials/store.js';
import { resolveCredentialKey, secretNeeded, type CredentialKey } from '../../credentials/key.js';
import { substituteEnv } from '../flows/env/env.js';
import type { RunState } from './run-state.js';

export interface RuntimeCredentialsDeps {
  settings: Settings;
  log: Logger;
  storage: Storage;
  registry: Pick<Registry, 'getCredentialDefinition'>;
  /** The deploy queue: a node's credential change is saved in it, never between a deploy's steps. */
  mutex: SerialQueue;
  state: RunState;
  /** A key that replaces the settings' one while it returns one (the active project's). */
  keyOverride?: () => CredentialKey | undefined;
}

/**
 * The deployed nodes' credentials as the runtime keeps them: the store and the key it opens with,
 * whether the stored ones could be read, and changes nodes make (RED.nodes.addCredentials) saved
 * shortly after.
 */
export class RuntimeCredentials {
  store!: CredentialStore;
  key!: CredentialKey;
  /** The stored credentials did not decrypt at start: the editor is warned until a deploy replaces them. */
  unreadable = false;
  private credentialSave: NodeJS.Timeout | undefined;

  constructor(private readonly deps: RuntimeCredentialsDeps) {}

  /**
   * Resolves the key (the override, else the settings' credentialSecret, else a generated one) and
   * opens the store with it. Called again when a project switch changes the key.
   */
  async open(): Promise<void> {
    this.key = this.deps.keyOverride?.() ?? await resolveCredentialKey(this.deps.settings, this.deps.storage, this.deps.log, storedCredentialsName(this.deps.settings));
    this.store = new CredentialStore({
      key: this.key,
      definitionOf: this.deps.registry.getCredentialDefinition,
      log: this.deps.log,
      storage: this.deps.storage,
    });
  }

  /**
   * Loads the stored credentials. When they do not decrypt, a start stops unless the user's own key
   * may replace them; otherwise the flows run without them.
   */
  async load(stored: StoredCredentials | null, atStart: boolean): Promise<void> {
    try {
      await this.store.load(stored);
      this.unreadable = false;
    } catch (err) {
      // Only a key the user chose may replace credentials it cannot read (Node-RED's behaviour):
      // a generated key is never the one they were meant to open with.
      if (atStart && this.key.type !== 'user') throw new RunnelError('credentials_undecryptable', secretNeeded(this.key.type, storedCredentialsName(this.deps.settings)));
      if (atStart && this.deps.storage.shared !== undefined) {
        throw new RunnelError('credentials_undecryptable', 'the stored credentials do not decrypt with this instance\'s key: every instance sharing a database needs the same credentialSecret');
      }
      // Node-RED's behaviour: flows still start, without credentials; the stored ones are left as
      // they are until the next deploy replaces them, and the editor says so meanwhile.
      this.deps.log.error({ code: (err as RunnelError).code, err: (err as Error).message }, this.problem());
      this.unreadable = true;
      this.store.replaceOnNextSave();
    }
  }

  /** Why the stored credentials are not used, and the two ways out, in the user's terms. */
  problem(): string {
    const key = {
      user: 'the credentialSecret of the settings',
      system: 'the key generated in .config.runtime.json (credentialSecret is not set)',
      disabled: 'no key: credentialSecret is false',
    }[this.key.type];
    const file = this.deps.storage.credentialsFile;
    const reset = file ? `, or delete ${file} to start without credentials` : '';
    return `The stored credentials do not decrypt with ${key}: the flows run without them, and the next deploy replaces them. ` +
      `Set credentialSecret to the key that encrypted them and restart${reset}`;
  }

  credentialsFor(id: string, type: string, env: (name: string) => unknown): Record<string, unknown> | undefined {
    const stored = this.store.get(id);
    if (stored) return substituteEnv(stored as FlowNodeConfig, env) as Record<string, unknown>;
    return this.deps.registry.getCredentialDefinition(type) ? {} : undefined;
  }

  /** RED.nodes.addCredentials / deleteCredentials: change one node's credentials and persist soon. */
  update(id: string, value: Record<string, unknown> | undefined): void {
    if (value === undefined) this.store.delete(id);
    else this.store.add(id, value);
    clearTimeout(this.credentialSave);
    this.credentialSave = setTimeout(() => void this.deps.mutex.run(() => this.flush()), 100);
    this.credentialSave.unref();
  }

  /** Saves a pending node change now (at stop); nothing when none is pending. */
  async flush(): Promise<void> {
    if (!this.credentialSave) return;
    clearTimeout(this.credentialSave);
    this.credentialSave = undefined;
    const doc = await this.store.serialise();
    await this.deps.storage.saveFlows({ flows: this.deps.state.active.flows, credentials: doc, expectedRev: this.deps.state.active.rev });
    await this.store.saved(doc);
  }
}
