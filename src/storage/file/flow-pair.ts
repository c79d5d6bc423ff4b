import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../base/log.js';
import { backupPathFor, readTextIfExists, writeFileAtomic } from '../atomic-file.js';
import { hashJson } from '../rev.js';
import type { FlowNodeConfig, StoredCredentials } from '../contract.js';

/**
 * Loading the flows file and the credentials file as one matched pair, repairing the pair when a
 * save was interrupted. A save writes the credentials file first, then the flows file, each
 * replaced atomically after copying the old one to its backup. So the only torn state a crash can
 * leave is "new credentials, old flows", recognisable because the credentials file records the rev
 * of the flows it belongs to (`rev`) and of the flows it replaced (`prevRev`).
 */

export interface PairPaths {
  flows: string;
  creds: string;
  /** Throws when the files may not be written now (a project's merge in progress); runs before every save. */
  beforeSave?: () => Promise<void>;
}

export interface LoadedFlows {
  flows: FlowNodeConfig[];
  rev: string;
  /** The flows' compact JSON, which the rev hashes. */
  json: string;
}

const NO_FLOWS: LoadedFlows = { flows: [], rev: hashJson('[]'), json: '[]' };

export interface LoadedCreds {
  doc: StoredCredentials | null;
  /** undefined for a Node-RED file or no file: nothing to check, it matches any flows. */
  rev: string | undefined;
  prevRev: string | undefined;
}

export interface LoadedPair {
  flows: LoadedFlows;
  creds: LoadedCreds;
  /** What was repaired, when something was. */
  recovered?: string;
}

/** Node-RED's name for the credentials file of a flows file: `flows.json` → `flows_cred.json`. */
function credentialsName(flowsPath: string): string {
  const ext = path.extname(flowsPath);
  return `${path.basename(flowsPath, ext)}_cred${ext}`;
}

/** Where Node-RED 4 keeps a flows file's credentials wherever the flows file is: in the user dir. */
export function userDirCredentialsPath(userDir: string, flowsPath: string): string {
  return path.join(userDir, credentialsName(flowsPath));
}

/**
 * Where Node-RED 5 keeps them: in the user dir when that file exists (a user dir Node-RED 4
 * wrote), else a new file next to the flows file.
 */
export function credentialsPathIn(userDir: string, flowsPath: string): string {
  const inUserDir = userDirCredentialsPath(userDir, flowsPath);
  return existsSync(inUserDir) ? inUserDir : credentialsPathFor(flowsPath);
}

/** The credentials file next to a flows file (a project's, and Node-RED 5's new file). */
export function credentialsPathFor(flowsPath: string): string {
  return path.join(path.dirname(flowsPath), credentialsName(flowsPath));
}

const NO_CREDS: LoadedCreds = { doc: null, rev: undefined, prevRev: undefined };

export function flowsFileText(flows: FlowNodeConfig[], pretty: boolean): string {
  return pretty ? JSON.stringify(flows, null, 4) : JSON.stringify(flows);
}

/** Runnel's credentials file: the opaque document plus the revs that tie it to a flows file. */
export function credsFileText(doc: StoredCredentials | null, rev: string, prevRev: string | undefined, pretty: boolean): string {
  const file = { $runnel: 1, rev, ...(prevRev === undefined ? {} : { prevRev }), data: doc };
  return pretty ? JSON.stringify(file, null, 4) : JSON.stringify(file);
}

/** A project's credentials file: Node-RED's document alone, as Node-RED writes it (git shares it with Node-RED). */
export function nodeRedCredsFileText(doc: StoredCredentials | null): string {
  return JSON.stringify(doc, null, 4);
}

function parseFlows(text: string): LoadedFlows {
  const flows: unknown = JSON.parse(text);
  if (!Array.isArray(flows)) throw new Error('the file does not hold an array');
  const json = JSON.stringify(flows);
  return { flows: flows as FlowNodeConfig[], rev: hashJson(json), json };
}

function parseCreds(text: string): LoadedCreds {
  const file: unknown = JSON.parse(text);
  if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new Error('the file does not hold an object');
  const f = file as Record<string, unknown>;
  if (f.$runnel === 1 && typeof f.rev === 'string' && 'data' in f) {
    const data = f.data;
    const doc = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as StoredCredentials) : null;
    return { doc, rev: f.rev, prevRev: typeof f.prevRev === 'string' ? f.prevRev : undefined };
  }
  return { doc: f, rev: undefined, prevRev: undefined };
}

type Read<T> = { kind: 'missing' } | { kind: 'corrupt'; reason: string } | { kind: 'ok'; value: T; text: string };

async function read<T>(file: string, parse: (text: string) => T): Promise<Read<T>> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { kind: 'missing' };
  try {
    return { kind: 'ok', value: parse(text), text };
  } catch (e) {
    return { kind: 'corrupt', reason: (e as Error).message };
  }
}

const matches = (creds: LoadedCreds, rev: string) => creds.rev === undefined || creds.rev === rev;

/** Keeps an unreadable file for the user instead of overwriting it at the next save. */
async function setAside(file: string, log: Logger, reason: string): Promise<void> {
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  await rename(file, aside);
  log.error({ file, movedTo: aside, reason }, 'Unreadable storage file moved aside');
}

/**
 * Reads the pair, picks a matching one (falling back to the backups) and rewrites the live files
 * when they did not hold it, so the disk is a consistent pair again before the next save.
 * Repairs skip the backup step: the backups are what made the recovery possible.
 */
export async function loadFlowPair(paths: PairPaths, pretty: boolean, log: Logger): Promise<LoadedPair> {
  const flowsRead = await read(paths.flows, parseFlows);
  const credsRead = await read(paths.creds, parseCreds);
  const notes: string[] = [];

  let flows: LoadedFlows;
  let flowsFromBackup = false;
  if (flowsRead.kind === 'ok') flows = flowsRead.value;
  else if (flowsRead.kind === 'missing') flows = { ...NO_FLOWS, flows: [] };
  else {
    await setAside(paths.flows, log, flowsRead.reason);
    const backup = await read(backupPathFor(paths.flows), parseFlows);
    if (backup.kind === 'ok') {
      flows = backup.value;
      flowsFromBackup = true;
      await writeFileAtomic(paths.flows, backup.text, { backup: false });
      notes.push('the flows file was unreadable; restored the flows from its backup');
    } else {
      flows = { ...NO_FLOWS, flows: [] };
      notes.push('the flows file was unreadable and has no usable backup; starting with no flows');
      log.error({ file: paths.flows }, 'No usable flows backup: starting with an empty configuration');
    }
  }

  const live = credsRead.kind === 'ok' ? credsRead.value : NO_CREDS;
  if (credsRead.kind === 'corrupt') await setAside(paths.creds, log, credsRead.reason);
  let creds = live;
  if (credsRead.kind === 'corrupt' || !matches(live, flows.rev)) {
    const backup = await read(backupPathFor(paths.creds), parseCreds);
    // Without the interrupted-save marker (prevRev) a mismatch means the flows file was edited by
    // hand: the live credentials are the newest and stay, rather than rolling back to older ones.
    const interrupted = credsRead.kind === 'corrupt' || flowsFromBackup || live.prevRev === flows.rev;
    if (interrupted && backup.kind === 'ok' && (matches(backup.value, flows.rev) || credsRead.kind === 'corrupt')) {
      // A Node-RED backup carries no rev and is kept verbatim; ours is re-tied to the chosen flows.
      const nodeRed = backup.value.rev === undefined;
      creds = nodeRed ? backup.value : { doc: backup.value.doc, rev: flows.rev, prevRev: undefined };
      const text = nodeRed ? backup.text : credsFileText(creds.doc, flows.rev, undefined, pretty);
      await writeFileAtomic(paths.creds, text, { backup: false, mode: 0o600 });
      notes.push('restored the credentials from their backup to match the flows');
    } else if (credsRead.kind === 'corrupt') {
      creds = NO_CREDS;
      notes.push('the credentials file was unreadable and has no usable backup; starting with no credentials');
    } else {
      creds = { doc: live.doc, rev: flows.rev, prevRev: undefined };
      await writeFileAtomic(paths.creds, credsFileText(live.doc, flows.rev, undefined, pretty), { backup: false, mode: 0o600 });
      notes.push('the flows file does not match the credentials file (edited outside Runnel?); kept both');
    }
  }

  if (notes.length === 0) return { flows, creds };
  const recovered = notes.join('; ');
  log.warn({ file: paths.flows, rev: flows.rev }, `Storage repaired at load: ${recovered}`);
  return { flows, creds, recovered };
}
