import { RUNTIME_SECRET_ENV } from '../../settings/settings.js';

const SECRETS = new Set(RUNTIME_SECRET_ENV);

/** A process env variable as flows see it: Runnel's own secrets are never part of it. */
export function processEnv(name: string): string | undefined {
  return SECRETS.has(name) ? undefined : process.env[name];
}
