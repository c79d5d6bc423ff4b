import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Settings } from '../settings/settings.js';
import { readTextIfExists, writeFileAtomic } from './atomic-file.js';

/** The file in the user dir that keeps a generated instance id across restarts. */
const INSTANCE_ID_FILE = '.instance-id';

/** `instanceId` from the settings, else the one generated at the first start and kept in the user dir. */
export async function resolveInstanceId(settings: Pick<Settings, 'instanceId' | 'userDir'>): Promise<string> {
  if (settings.instanceId !== undefined) return settings.instanceId;
  const file = path.join(settings.userDir, INSTANCE_ID_FILE);
  const stored = (await readTextIfExists(file))?.trim();
  if (stored && /^[A-Za-z0-9._-]{1,128}$/.test(stored)) return stored;
  const id = randomBytes(6).toString('hex');
  await writeFileAtomic(file, `${id}\n`, { backup: false });
  return id;
}
