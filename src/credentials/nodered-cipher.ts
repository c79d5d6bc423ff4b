import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { CredentialMap } from '../storage/contract.js';

/**
 * Node-RED's credential format, `{"$": "<32 hex chars of IV><base64 ciphertext>"}`: AES-256-CTR
 * under SHA-256(secret), no salt, no MAC. Runnel reads it (existing user dirs, the `$` deploy form)
 * and writes it only for tooling and tests; its own files use the authenticated format in cipher.ts.
 */

const ALGORITHM = 'aes-256-ctr';
const IV_HEX = /^[0-9a-fA-F]{32}/;

function keyOf(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function isCredentialMap(v: unknown): v is CredentialMap {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return Object.values(v).every((entry) => typeof entry === 'object' && entry !== null && !Array.isArray(entry));
}

export function encryptNodeRedBlob(map: CredentialMap, secret: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv(ALGORITHM, keyOf(secret), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(map), 'utf8'), cipher.final()]);
  return iv.toString('hex') + data.toString('base64');
}

/**
 * Throws when the blob does not decrypt to a credential map. CTR has no MAC, so a wrong key is
 * only noticed because the "plaintext" is garbage that does not parse as a JSON object.
 */
export function decryptNodeRedBlob(blob: string, secret: string): CredentialMap {
  if (!IV_HEX.test(blob)) throw new Error('not a Node-RED credentials blob');
  const iv = Buffer.from(blob.slice(0, 32), 'hex');
  const decipher = createDecipheriv(ALGORITHM, keyOf(secret), iv);
  const text = Buffer.concat([decipher.update(Buffer.from(blob.slice(32), 'base64')), decipher.final()]).toString('utf8');
  let map: unknown;
  try {
    map = JSON.parse(text);
  } catch {
    throw new Error('the credentials do not decrypt with this key');
  }
  if (!isCredentialMap(map)) throw new Error('the credentials do not decrypt with this key');
  return map;
}
