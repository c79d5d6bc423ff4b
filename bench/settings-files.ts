/**
 * Equivalent settings for both systems: loopback, admin auth with the same bcrypt cost, the same
 * credentialSecret, warn-level logs and the same request size limit.
 */
import { hash } from '../src/auth/bcrypt.js';

export interface BenchUsers {
  admin: string;
  password: string;
  /** Users for the login storm; they share the admin's password (and so its hash). */
  storm: string[];
  hash: string;
  cost: number;
}

const CREDENTIAL_SECRET = 'bench-credential-secret';
const API_MAX_LENGTH = '50mb';

export async function makeUsers(cost: number, stormCount: number): Promise<BenchUsers> {
  const password = 'bench-password';
  return {
    admin: 'admin',
    password,
    storm: Array.from({ length: stormCount }, (_, i) => `bench-user-${i}`),
    hash: await hash(password, cost),
    cost,
  };
}

/** The palette's online catalogue is unreachable here, and the welcome tour would cover the editor. */
const EDITOR_THEME = { palette: { catalogues: [] }, tours: false };

function userList(users: BenchUsers) {
  return [users.admin, ...users.storm].map((username) => ({ username, password: users.hash, permissions: '*' }));
}

/** Runnel's JSON settings file. */
export function runnelSettings(port: number, userDir: string, users: BenchUsers, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    uiPort: port,
    uiHost: '127.0.0.1',
    userDir,
    credentialSecret: CREDENTIAL_SECRET,
    adminAuth: { type: 'credentials', users: userList(users) },
    apiMaxLength: API_MAX_LENGTH,
    logging: { level: 'warn' },
    editorTheme: EDITOR_THEME,
    ...extra,
  }, null, 2);
}

/** Node-RED's settings.js (CommonJS). Telemetry is off so the peer makes no outside calls. */
export function nodeRedSettings(port: number, users: BenchUsers, extra: Record<string, unknown> = {}): string {
  const settings = {
    uiPort: port,
    uiHost: '127.0.0.1',
    flowFile: 'flows.json',
    credentialSecret: CREDENTIAL_SECRET,
    adminAuth: { type: 'credentials', users: userList(users) },
    apiMaxLength: API_MAX_LENGTH,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    telemetry: { enabled: false, updateNotification: false },
    editorTheme: EDITOR_THEME,
    ...extra,
  };
  return `module.exports = ${JSON.stringify(settings, null, 2)};\n`;
}
