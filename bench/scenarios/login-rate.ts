import { CLIENT_ID } from '../admin-client.js';
import { cannon, probe } from '../load.js';
import { checkCannon } from './common.js';
import type { Scenario } from './types.js';

const CONNECTIONS = 8;
/** Pause between responsiveness probes: frequent enough to see a stalled event loop. */
const PROBE_GAP_MS = 5;

/**
 * login-rate: POST /auth/token as rotating distinct users (bcrypt at the configured cost) while
 * a second load process times GET /auth/login one request at a time: the event loop's
 * responsiveness seen from a client.
 */
export const loginRateScenario: Scenario = {
  name: 'login-rate',
  description: `POST /auth/token with distinct users, ${CONNECTIONS} connections × --login-duration; GET /auth/login latency meanwhile`,
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'rate', label: 'logins/s', unit: 'logins/s', digits: 1 },
    { key: 'probeP50', label: 'GET /auth/login p50 during storm', unit: 'ms', digits: 2 },
    {
      key: 'probeP99', label: 'GET /auth/login p99 during storm', unit: 'ms', digits: 2,
      goals: [{ kind: 'absolute', op: '<', value: 20 }],
    },
  ],
  async measure(system, ctx) {
    const { users } = ctx.env;
    const seconds = ctx.opts.loginDuration;
    const [storm, responsiveness] = await Promise.all([
      cannon({
        url: `${system.base}auth/token`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: seconds,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        rotateLogins: { usernames: users.storm, password: users.password, clientId: CLIENT_ID },
      }),
      probe({ url: `${system.base}auth/login`, gapMs: PROBE_GAP_MS, durationMs: seconds * 1000 }),
    ]);
    checkCannon(storm, `${system.kind} POST /auth/token`, ctx);
    if (responsiveness.failures > 0) {
      ctx.log(`  warning: ${system.kind} GET /auth/login failed ${responsiveness.failures} of ${responsiveness.count} times`);
    }
    return { rate: storm.rps, probeP50: responsiveness.p50, probeP99: responsiveness.p99 };
  },
};
