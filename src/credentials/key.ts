import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Settings } from '../settings.js';
import type { Storage } from '../storage/types.js';

/**
 * Which key encrypts the credentials, as Node-RED chooses it: the user's `credentialSecret`, none
 * when it is `false`, otherwise a generated "system" key kept in the runtime config as
 * `_credentialSecret` (so a Node-RED user dir keeps opening with the key Node-RED generated).
 */

export interface CredentialKey {
  type: 'user' | 'system' | 'disabled';
  /** undefined when encryption is disabled. */
  secret: string | undefined;
  /** Keys still accepted for reading: the system key a user key or `false` is replacing. */
  legacySecrets: string[];
}

type KeyStorage = Pick<Storage, 'getRuntimeConfig' | 'updateRuntimeConfig'>;

const SYSTEM_KEY = '_credentialSecret';

export async function resolveCredentialKey(
  settings: Pick<Settings, 'credentialSecret'>, storage: KeyStorage, log: Logger,
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
  // Set only if still absent: an instance sharing the storage may have generated one meanwhile.
  const generated = randomBytes(32).toString('hex');
  const kept = await storage.updateRuntimeConfig((c) => (typeof c[SYSTEM_KEY] === 'string' && c[SYSTEM_KEY] !== '' ? c : { ...c, [SYSTEM_KEY]: generated }));
  const secret = kept[SYSTEM_KEY] as string;
  if (secret !== generated) return { type: 'system', secret, legacySecrets: [] };
  log.warn('Generated a credential key and saved it in .config.runtime.json; lose that file and the credentials are lost. Set credentialSecret to choose your own');
  return { type: 'system', secret, legacySecrets: [] };
}

/** Drops the generated key from the runtime config once nothing encrypted with it is stored. */
export async function retireSystemKey(storage: KeyStorage, log: Logger): Promise<void> {
  if (!(SYSTEM_KEY in (await storage.getRuntimeConfig()))) return;
  await storage.updateRuntimeConfig(({ [SYSTEM_KEY]: _retired, ...rest }) => rest);
  log.info('Credentials re-encrypted: removed the generated key from .config.runtime.json');
}
