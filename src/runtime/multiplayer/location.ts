/** Where an editor's user is, as Node-RED's multiplayer carries it: the tab, the node being edited, the cursor. */
export interface Location {
  workspace?: string;
  node?: string;
  cursor?: { x: number; y: number };
}

/** Who a presence shows: a logged-in user by name, anyone else as Node-RED's "Anon NN". */
export interface PresenceUser {
  username: string;
  anonymous?: true;
}

/** One editor session as the others see it (Node-RED's `multiplayer/init` and `connection-added` payload). */
export interface PublicSession {
  session: string;
  user: PresenceUser;
  location?: Location;
}

/** Node-RED's checks: ids are alphanumeric (with dots), the cursor two numbers. */
const ID = /^[a-zA-Z0-9.]{1,64}$/;

/**
 * A location from an editor or another instance, keeping only its known fields; undefined when any
 * is malformed (Node-RED ignores such a message).
 */
export function parseLocation(data: unknown): Location | undefined {
  if (!isRecord(data)) return undefined;
  const location: Location = {};
  if (data.workspace !== undefined && data.workspace !== null && data.workspace !== '') {
    if (typeof data.workspace !== 'string' || !ID.test(data.workspace)) return undefined;
    location.workspace = data.workspace;
  }
  if (data.node !== undefined && data.node !== null && data.node !== '') {
    if (typeof data.node !== 'string' || !ID.test(data.node)) return undefined;
    location.node = data.node;
  }
  if (data.cursor !== undefined && data.cursor !== null) {
    if (!isRecord(data.cursor)) return undefined;
    const x = Number(data.cursor.x);
    const y = Number(data.cursor.y);
    if (!Number.isFinite(x) || !Number.isFinite(y)) return undefined;
    location.cursor = { x, y };
  }
  return location;
}

/** A session announced by another instance, checked as carefully as an editor's message. */
export function parsePublicSession(data: unknown): PublicSession | undefined {
  if (!isRecord(data) || typeof data.session !== 'string' || !/^PUB[a-f0-9]{16}PUB$/.test(data.session)) return undefined;
  const user = data.user;
  if (!isRecord(user) || typeof user.username !== 'string' || user.username.length > 256) return undefined;
  const location = data.location === undefined ? undefined : parseLocation(data.location);
  return {
    session: data.session,
    user: { username: user.username, ...(user.anonymous === true ? { anonymous: true as const } : {}) },
    ...(location ? { location } : {}),
  };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
