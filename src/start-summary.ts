import path from 'node:path';
import type { CredentialKey } from './credentials/key.js';
import type { Settings } from './settings/settings.js';
import { RUNNEL_VERSION } from './base/version.js';

/**
 * What a start loaded, said once: the settings file, the user dir, the storage, where the
 * credential key came from, the authentication mode and the URL. Text for a person at a terminal,
 * one JSON line (the log's shape) for machines.
 */

export interface StartSummary {
  /** null: no settings file, the embedded defaults. */
  settingsFile: string | null;
  userDir: string;
  storage: string;
  credentialKey: string;
  adminAuth: string;
}

export function startSummary(settings: Settings, key: CredentialKey): StartSummary {
  return {
    settingsFile: settings.settingsFile ?? null,
    userDir: settings.userDir,
    storage: storageOf(settings),
    credentialKey: keyOf(settings, key),
    adminAuth: authOf(settings),
  };
}

function storageOf(settings: Settings): string {
  if (settings.storageModule) return `the storage module of the settings (storageModule); history in ${path.join(settings.userDir, '.history')}`;
  if (settings.storage.type === 'file') return `files in the user dir (${path.resolve(settings.userDir, settings.flowFile)})`;
  // The URL's password stays out of the output.
  const url = new URL(settings.storage.url);
  return `postgres ${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}, schema ${settings.storage.schema}`;
}

function keyOf(settings: Settings, key: CredentialKey): string {
  switch (key.type) {
    case 'user':
      return `credentialSecret from ${settings.settingsFile ?? 'the settings'}`;
    case 'system':
      if (settings.storageModule) return 'generated key (_credentialSecret in the storage module\'s settings); set credentialSecret to choose your own';
      return settings.storage.type === 'file'
        ? `generated key (_credentialSecret in ${path.join(settings.userDir, '.config.runtime.json')}); set credentialSecret to choose your own`
        : 'generated key (_credentialSecret in the database); set credentialSecret to choose your own';
    case 'disabled':
      return 'none: credentialSecret is false, credentials are stored unencrypted';
  }
}

function authOf(settings: Settings): string {
  const auth = settings.adminAuth;
  if (!auth) return 'off: no adminAuth, anyone who can reach the address administers this runtime';
  const users = typeof auth.users === 'function' ? 'a users function' : auth.users.length === 1 ? `1 user (${auth.users[0]!.username})` : `${auth.users.length} users`;
  const how = auth.type === 'strategy' ? `strategy ${JSON.stringify(auth.strategy.name)} for ${users}` : users;
  const extras = [auth.tokens ? 'a tokens function' : '', auth.default ? `anonymous ${JSON.stringify(auth.default.permissions)}` : ''].filter(Boolean);
  return `adminAuth: ${how}${extras.length ? `, ${extras.join(', ')}` : ''}`;
}

/** The first line carries the URL (`… listening on <url>`); the rest are indented `name  value` lines. */
export function formatStartSummary(url: string, summary: StartSummary, format: 'text' | 'json'): string {
  const headline = `Runnel ${RUNNEL_VERSION} listening on ${url}`;
  if (format === 'json') return `${JSON.stringify({ level: 30, time: new Date().toISOString(), msg: headline, url, ...summary })}\n`;
  const rows: [string, string][] = [
    ['settings', summary.settingsFile ?? 'none (embedded defaults)'],
    ['user dir', summary.userDir],
    ['storage', summary.storage],
    ['credentials', summary.credentialKey],
    ['admin auth', summary.adminAuth],
  ];
  return `${headline}\n${rows.map(([name, value]) => `  ${name.padEnd(13)}${value}`).join('\n')}\n`;
}
