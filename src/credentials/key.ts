import { randomBytes } from 'node:crypto';
import { RunnelError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import type { Settings } from '../settings/settings.js';
import type { Storage, StoredCredentials } from '../storage/contract.js';
import type { CredentialFormat } from './cipher.js';

/**
 * Which key encrypts the credentials, as Node-RED chooses it: the user's `credentialSecret`, none
 * when it is `false`, otherwise a generated "system" key kept in the runtime config as
 * `_credentialSecret` (so a Node-RED user dir keeps opening with the key Node-RED generated).
 * A key is never generated next to stored credentials that are already encrypted: no new key
 * could open them, and the next deploy would replace them.
 */

export interface CredentialKey {
  type: 'user' | 'system' | 'disabled';
  /** undefined when encryption is disabled. */
  secret: string | undefined;
  /** Keys still accepted for reading: the system key a user key or `false` is replacing. */
  legacySecrets: string[];
  /** How the credentials are written; Runnel's own format unless set. */
  format?: CredentialFormat;
}

type ConfigStorage = Pick<Storage, 'getRuntimeConfig' | 'updateRuntimeConfig'>;
type KeyStorage = ConfigStorage & Pick<Storage, 'getFlows'>;

const SYSTEM_KEY = '_credentialSecret';

/** `where` names the stored credentials in the refusal (`the credentials in /home/me/.node-red/flows_cred.json`). */
export async function resolveCredentialKey(
  settings: Pick<Settings, 'credentialSecret'>, storage: KeyStorage, log: Logger, where?: string,
): Promise<CredentialKey> {
  const config = await storage.getRuntimeConfig();
  const stored = config[SYSTEM_KEY];
  const systemKey = typeof stored === 'string' && stored.length > 0 ? stored : undefined;
  const configured = settings.credentialSecret;

  if (typeof configured === 'string') {
    const legacySecrets = systemKey !== undefined && systemKey !== configured ? [systemKey] : [];
    if (legacySecrets.length > 0) {
      log.info('credentialSecret is set: credentials encrypted with the generated key will be re-encrypted at the next deploy');
    }
    return { type: 'user', secret: configured, legacySecrets };
  }
  if (configured === false) {
    log.warn('credentialSecret is false: credentials are stored unencrypted');
    return { type: 'disabled', secret: undefined, legacySecrets: systemKey === undefined ? [] : [systemKey] };
  }
  if (systemKey !== undefined) {
    log.warn('Credentials are encrypted with a generated key kept in .config.runtime.json; set credentialSecret to choose your own');
    return { type: 'system', secret: systemKey, legacySecrets: [] };
  }
  if (isEncrypted((await storage.getFlows()).credentials)) throw new RunnelError('credentials_undecryptable', secretNeeded('none', where));
  // Set only if still absent: an instance sharing the storage may have generated one meanwhile.
  const generated = randomBytes(32).toString('hex');
  const kept = await storage.updateRuntimeConfig((c) => (typeof c[SYSTEM_KEY] === 'string' && c[SYSTEM_KEY] !== '' ? c : { ...c, [SYSTEM_KEY]: generated }));
  const secret = kept[SYSTEM_KEY] as string;
  if (secret !== generated) return { type: 'system', secret, legacySecrets: [] };
  log.warn('Generated a credential key and saved it in .config.runtime.json; lose that file and the credentials are lost. Set credentialSecret to choose your own');
  return { type: 'system', secret, legacySecrets: [] };
}

/** Drops the generated key from the runtime config once nothing encrypted with it is stored. */
export async function retireSystemKey(storage: ConfigStorage, log: Logger): Promise<void> {
  if (!(SYSTEM_KEY in (await storage.getRuntimeConfig()))) return;
  await storage.updateRuntimeConfig(({ [SYSTEM_KEY]: _retired, ...rest }) => rest);
  log.info('Credentials re-encrypted: removed the generated key from .config.runtime.json');
}

/** The key a stored document may be read with, without generating one (what `runnel export` uses). */
export async function readCredentialKey(settings: Pick<Settings, 'credentialSecret'>, storage: Pick<Storage, 'getRuntimeConfig'>): Promise<CredentialKey | undefined> {
  const stored = (await storage.getRuntimeConfig())[SYSTEM_KEY];
  const systemKey = typeof stored === 'string' && stored.length > 0 ? stored : undefined;
  const legacySecrets = systemKey === undefined ? [] : [systemKey];
  if (typeof settings.credentialSecret === 'string') return { type: 'user', secret: settings.credentialSecret, legacySecrets: legacySecrets.filter((k) => k !== settings.credentialSecret) };
  if (settings.credentialSecret === false) return { type: 'disabled', secret: undefined, legacySecrets };
  return systemKey === undefined ? undefined : { type: 'system', secret: systemKey, legacySecrets: [] };
}

export function isEncrypted(doc: StoredCredentials | null): boolean {
  return doc !== null && (typeof doc.$ === 'string' || doc.alg === 'aes-256-gcm');
}

const SET_SECRET = 'set credentialSecret in the settings file (settings.js) to the secret they were encrypted with';

/** One line: why no key opens the stored credentials and which secret does. */
export function secretNeeded(key: CredentialKey['type'] | 'none', where = 'the stored credentials'): string {
  switch (key) {
    case 'none':
      return `${where} are encrypted, but credentialSecret is not set and there is no generated key (_credentialSecret in .config.runtime.json): ${SET_SECRET}, or put back the .config.runtime.json that holds it`;
    case 'system':
      return `${where} do not decrypt with the generated key (_credentialSecret in .config.runtime.json): ${SET_SECRET}`;
    case 'disabled':
      return `${where} are encrypted and credentialSecret is false: ${SET_SECRET}`;
    case 'user':
      return `${where} do not decrypt with credentialSecret: set it to the secret they were encrypted with`;
  }
}
