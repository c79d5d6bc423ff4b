import { readFile, writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { CredentialCipher } from '../../credentials/cipher.js';
import type { CredentialMap, FlowNodeConfig, StoredCredentials } from '../../storage/contract.js';
import { credsFileText, flowsFileText } from '../../storage/file/flow-pair.js';
import { revOf } from '../../storage/rev.js';
import type { FlowPaths } from '../projects.js';

/**
 * On a cluster the running flows live in the database, as every deploy's do; a project's flow
 * files in a working clone are where git sees them. They are written from the running flows before
 * an operation reads the working copy, and deployed from the files after one changes them. Files
 * are rewritten only when their content differs, so git never sees a change that is only a new
 * encryption of the same credentials.
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
    await writeFile(paths.creds, credsFileText(doc, revOf(running.flows), undefined, true), { mode: 0o600 });
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
  // Runnel's credentials file wraps the document; Node-RED's is the document.
  const doc = file.$runnel === undefined ? file : file.data;
  return doc === null || doc === undefined ? {} : (await cipherOf(secret).decrypt(doc)).map;
}

function cipherOf(secret: string | false): CredentialCipher {
  return new CredentialCipher(secret === false ? undefined : secret);
}
