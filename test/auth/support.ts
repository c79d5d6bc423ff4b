import { resolveSettings, type Settings } from '../../src/settings/settings.js';
import type { SessionRecord, Storage } from '../../src/storage/contract.js';
import { MemoryLoginFailures } from '../../src/storage/memory-login-failures.js';
import { adminHash, readerHash } from '../helpers/users.js';

/** Just the sessions and login-failure parts of Storage, in memory; `saved` counts writes and keeps copies. */
export class MemorySessions implements Storage {
  readonly loginFailures = new MemoryLoginFailures();
  get queues(): never {
    throw new Error('not used by auth');
  }
  sessions: SessionRecord[] = [];
  saves = 0;
  async init() {}
  async getFlows(): Promise<never> {
    throw new Error('not used by auth');
  }
  async saveFlows(): Promise<never> {
    throw new Error('not used by auth');
  }
  async recordRevision(): Promise<never> {
    throw new Error('not used by auth');
  }
  async listRevisions(): Promise<never> {
    throw new Error('not used by auth');
  }
  async getRevision(): Promise<never> {
    throw new Error('not used by auth');
  }
  async getSessions() {
    return structuredClone(this.sessions);
  }
  async saveSessions(sessions: SessionRecord[]) {
    this.saves++;
    this.sessions = structuredClone(sessions);
  }
  async getRuntimeConfig() {
    return {};
  }
  async saveRuntimeConfig() {}
  async updateRuntimeConfig() {
    return {};
  }
  async getUserSettings() {
    return {};
  }
  async saveUserSettings() {}
  async getLibraryEntry() {
    return [];
  }
  async saveLibraryEntry() {}
  async close() {}
}

export function authSettings(extra: Record<string, unknown> = {}, adminAuthExtra: Record<string, unknown> = {}): Settings {
  return resolveSettings({
    userDir: '/nonexistent-runnel-test',
    adminAuth: {
      type: 'credentials',
      users: [
        { username: 'admin', password: adminHash, permissions: '*' },
        { username: 'reader', password: readerHash, permissions: 'read' },
        { username: 'writer', password: adminHash, permissions: ['flows.write', 'nodes.read'] },
      ],
      ...adminAuthExtra,
    },
    ...extra,
  });
}
