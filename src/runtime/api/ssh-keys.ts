import type { SshKeys } from '../../projects/ssh-keys.js';
import type { KeyRequest } from '../../projects/ssh-keygen.js';
import type { Caller } from './caller.js';

/**
 * /settings/user/keys: the caller's own SSH keys for git remotes, in Node-RED's shapes. The private
 * key never leaves the server; generating and deleting a key are audited.
 */
export interface SshKeysApi {
  list(caller: Caller): Promise<{ keys: Array<{ name: string }> }>;
  publicKey(name: string, caller: Caller): Promise<{ publickey: string }>;
  generate(req: KeyRequest, caller: Caller): Promise<{ name: string }>;
  remove(name: string, caller: Caller): Promise<void>;
}

export function sshKeysApi(keys: SshKeys, audit: (event: string, caller: Caller, extra?: Record<string, unknown>) => void): SshKeysApi {
  return {
    list: async (caller) => ({ keys: await keys.list(caller.user) }),
    publicKey: async (name, caller) => ({ publickey: await keys.publicKey(caller.user, name) }),
    generate: async (req, caller) => {
      const name = await keys.generate(caller.user, req);
      audit('key.generate', caller, { key: name });
      return { name };
    },
    remove: async (name, caller) => {
      await keys.remove(caller.user, name);
      audit('key.delete', caller, { key: name });
    },
  };
}
