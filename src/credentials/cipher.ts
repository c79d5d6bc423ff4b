import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt } from 'node:crypto';
import type { CredentialMap, StoredCredentials } from '../storage/contract.js';
import { decryptNodeRedBlob, encryptNodeRedBlob, isCredentialMap } from './nodered-cipher.js';

export { decryptNodeRedBlob, encryptNodeRedBlob, isCredentialMap } from './nodered-cipher.js';

/**
 * Encryption of the credential map at rest: AES-256-GCM (authenticated, so tampering and wrong
 * keys are detected) under a key stretched from the secret with scrypt. The salt and scrypt
 * parameters travel in the document, so parameters can change without breaking old files.
 *
 * Documents written:  {"alg":"aes-256-gcm","kdf":"scrypt","N":..,"r":..,"p":..,"salt","iv","tag","data"}
 *                     {"plain": {...map}} when encryption is disabled.
 * Documents read too: Node-RED's {"$": blob} and Node-RED's plain map (encryption was off there).
 * With the `node-red` format (a project's credentials file, which git shares with Node-RED) those
 * two are what is written, and are current.
 */

/** How documents are written: Runnel's authenticated one, or Node-RED's. */
export type CredentialFormat = 'runnel' | 'node-red';

const SCRYPT = { N: 2 ** 15, r: 8, p: 1 };
// Refuse parameters that would let a crafted file make us burn memory or minutes.
const LIMITS = { N: 2 ** 20, r: 32, p: 16 };

interface GcmDocument {
  alg: 'aes-256-gcm';
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  iv: string;
  tag: string;
  data: string;
}

export interface Decrypted {
  map: CredentialMap;
  /** The document is in the format and under the key the next save would use. */
  current: boolean;
}

/** Derived keys by secret hash + salt + parameters: scrypt is deliberately slow, derive once. */
const keyCache = new Map<string, Promise<Buffer>>();
const KEY_CACHE_SIZE = 32;

function deriveKey(secret: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const id = `${createHash('sha256').update(secret).digest('hex')}:${salt.toString('base64')}:${params.N}:${params.r}:${params.p}`;
  let key = keyCache.get(id);
  if (key === undefined) {
    key = new Promise<Buffer>((resolve, reject) => {
      const maxmem = 256 * params.N * params.r + 1024 * 1024;
      scrypt(secret, salt, 32, { N: params.N, r: params.r, p: params.p, maxmem }, (err, derived) => (err ? reject(err) : resolve(derived)));
    });
    key.catch(() => keyCache.delete(id));
    keyCache.set(id, key);
    if (keyCache.size > KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value as string);
  }
  return key;
}

function headerOf(doc: Pick<GcmDocument, 'N' | 'r' | 'p' | 'salt'>): Buffer {
  // Authenticated with the data, so nobody can swap the salt or parameters undetected.
  return Buffer.from(`aes-256-gcm;scrypt;${doc.N};${doc.r};${doc.p};${doc.salt}`, 'utf8');
}

function isGcmDocument(doc: StoredCredentials): doc is StoredCredentials & GcmDocument {
  const int = (v: unknown, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max;
  return doc.alg === 'aes-256-gcm' && doc.kdf === 'scrypt' && int(doc.N, LIMITS.N) && int(doc.r, LIMITS.r)
    && int(doc.p, LIMITS.p) && ['salt', 'iv', 'tag', 'data'].every((k) => typeof doc[k] === 'string');
}

export class CredentialCipher {
  /** Reused across saves under the current secret, so scrypt runs once per process, not per deploy. */
  private salt: Buffer | undefined;

  /**
   * @param secret the current key; undefined = encryption disabled.
   * @param legacySecrets older keys still accepted for reading (migration from a generated key).
   */
  constructor(private readonly secret: string | undefined, private legacySecrets: string[] = [], private readonly format: CredentialFormat = 'runnel') {}

  get hasLegacySecrets(): boolean {
    return this.legacySecrets.length > 0;
  }

  forgetLegacySecrets(): void {
    this.legacySecrets = [];
  }

  async encrypt(map: CredentialMap): Promise<StoredCredentials> {
    if (this.format === 'node-red') return this.secret === undefined ? structuredClone(map) : { $: encryptNodeRedBlob(map, this.secret) };
    if (this.secret === undefined) return { plain: structuredClone(map) };
    this.salt ??= randomBytes(16);
    const head = { ...SCRYPT, salt: this.salt.toString('base64') };
    const key = await deriveKey(this.secret, this.salt, SCRYPT);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(headerOf(head));
    const data = Buffer.concat([cipher.update(JSON.stringify(map), 'utf8'), cipher.final()]);
    const doc: GcmDocument = {
      alg: 'aes-256-gcm', kdf: 'scrypt', ...head,
      iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64'),
    };
    return { ...doc };
  }

  /** Throws an Error when no known key opens the document or it is in no known shape. */
  async decrypt(doc: StoredCredentials): Promise<Decrypted> {
    if (isGcmDocument(doc)) {
      for (const [i, secret] of this.secrets().entries()) {
        const map = await this.openGcm(doc, secret);
        if (map === undefined) continue;
        const current = this.secret !== undefined && i === 0;
        if (current) this.salt = Buffer.from(doc.salt, 'base64');
        return { map, current };
      }
      throw new Error('the credentials do not decrypt with the configured key');
    }
    if (typeof doc.$ === 'string') return this.decryptNodeRed(doc.$);
    const keys = Object.keys(doc);
    if (keys.length === 1 && keys[0] === 'plain' && isCredentialMap(doc.plain)) {
      return { map: structuredClone(doc.plain), current: this.secret === undefined && this.format === 'runnel' };
    }
    if (isCredentialMap(doc)) return { map: structuredClone(doc), current: this.secret === undefined && this.format === 'node-red' };
    throw new Error('the credentials document has an unknown format');
  }

  private decryptNodeRed(blob: string): Decrypted {
    if (this.format === 'node-red' && this.secret !== undefined) {
      try {
        return { map: decryptNodeRedBlob(blob, this.secret), current: true };
      } catch {
        // A legacy key may open it; then it is re-encrypted at the next save.
      }
    }
    return { map: this.openNodeRed(blob), current: false };
  }

  /** Decrypts a Node-RED `$` blob with the current key, then the legacy ones. */
  openNodeRed(blob: string): CredentialMap {
    for (const secret of this.secrets()) {
      try {
        return decryptNodeRedBlob(blob, secret);
      } catch {
        // Try the next key.
      }
    }
    throw new Error('the credentials do not decrypt with the configured key');
  }

  private secrets(): string[] {
    return [...(this.secret === undefined ? [] : [this.secret]), ...this.legacySecrets];
  }

  private async openGcm(doc: GcmDocument, secret: string): Promise<CredentialMap | undefined> {
    const key = await deriveKey(secret, Buffer.from(doc.salt, 'base64'), doc);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(doc.iv, 'base64'), { authTagLength: 16 });
      decipher.setAAD(headerOf(doc));
      decipher.setAuthTag(Buffer.from(doc.tag, 'base64'));
      const text = Buffer.concat([decipher.update(Buffer.from(doc.data, 'base64')), decipher.final()]).toString('utf8');
      const map: unknown = JSON.parse(text);
      return isCredentialMap(map) ? map : undefined;
    } catch {
      return undefined;
    }
  }
}
