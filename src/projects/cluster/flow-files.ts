import { readFile, writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { CredentialCipher } from '../../credentials/cipher.js';
import type { CredentialMap, FlowNodeConfig, StoredCredentials } from '../../storage/contract.js';
import { flowsFileText, nodeRedCredsFileText } from '../../storage/file/flow-pair.js';
import { projectKeyFor } from '../start.js';
import type { FlowPaths } from '../projects.js';

/**
 * On a cluster the running flows live in the database, as every deploy's do; a project's flow
 * files in a working clone are where git sees them. They are written from the running flows before
 * an operation reads the working copy, and deployed from the files after one changes them. Files
 * are rewritten only when their content differs, so git never sees a change that is only a new
 * encryption of the same credentials. The credentials file is in Node-RED's format, as on one
 * machine (src/storage/file/file-storage.ts): it is committed, and Node-RED must open a clone.
 */

export interface RunningFlows {
  flows: FlowNodeConfig[];
  credentials: CredentialMap;
}

/** Writes the running flows and credentials (encrypted with the project's secret, false for none) into the project's files. */
export async function writeFlowFiles(paths: FlowPaths, running: RunningFlows, secret: string | false): Promise<void> {
  // The text, not the parsed nodes, is compared: a tenth of the time for a 10,000-node file.
  const text = flowsFileText(running.flows, true);
  if ((await readFile(paths.flows, 'utf8').catch(() => undefined)) !== text) await writeFile(paths.flows, text);
  const current = await readCredentials(paths, secret).catch(() => undefined);
  if (!isDeepStrictEqual(current, running.credentials)) {
    const doc = await cipherOf(secret).encrypt(running.credentials);
    await writeFile(paths.creds, nodeRedCredsFileText(doc), { mode: 0o600 });
  }
}

/** The project's flows and decrypted credentials, as a deploy takes them. */
export async function readFlowFiles(paths: FlowPaths, secret: string | false): Promise<RunningFlows> {
  const flows = JSON.parse(await readFile(paths.flows, 'utf8')) as FlowNodeConfig[];
  return { flows, credentials: await readCredentials(paths, secret) };
}

async function readCredentials(paths: FlowPaths, secret: string | false): Promise<CredentialMap> {
  const text = await readFile(paths.creds, 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  const file = JSON.parse(text) as StoredCredentials & { $runnel?: number; data?: StoredCredentials | null };
  // Node-RED's file is the document; Runnel's, which older versions committed, wraps it.
  const doc = file.$runnel === undefined ? file : file.data;
  return doc === null || doc === undefined ? {} : (await cipherOf(secret).decrypt(doc)).map;
}

function cipherOf(secret: string | false): CredentialCipher {
  const key = projectKeyFor(secret);
  return new CredentialCipher(key.secret, key.legacySecrets, key.format);
}
