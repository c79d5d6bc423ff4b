import { OAuthError } from './oauth-error.js';

/**
 * Node-RED's permission match, kept exactly so tokens and settings carry over:
 * `*` allows everything; `read`/`*.read` allow any `x.read`; `write`/`*.write` any `x.write`;
 * otherwise only an exact match. Write does not imply read. The empty permission (any
 * authenticated caller) is always allowed.
 */
export function hasPermission(scope: readonly string[], permission: string): boolean {
  if (permission === '') return true;
  return scope.some((s) => allows(s, permission));
}

function allows(granted: string, permission: string): boolean {
  if (granted === '*' || granted === permission) return true;
  if (granted === 'read' || granted === '*.read') return permission === 'read' || permission.endsWith('.read');
  if (granted === 'write' || granted === '*.write') return permission === 'write' || permission.endsWith('.write');
  return false;
}

/** A user's configured permissions as a list. */
export function permissionList(permissions: string | readonly string[]): string[] {
  return typeof permissions === 'string' ? [permissions] : [...permissions];
}

/**
 * The scope of a new token. A missing or empty request means the user's own permissions (Node-RED
 * instead issues a token that can do nothing when `scope` is absent). Otherwise every requested
 * element must be covered by the user's permissions; there is no silent narrowing, so a client
 * learns at login that it asked for too much. Throws OAuthError `invalid_scope`.
 */
export function resolveScope(requested: string | undefined, userPermissions: string | readonly string[]): string[] {
  const own = permissionList(userPermissions);
  const wanted = [...new Set((requested ?? '').split(' ').filter((s) => s !== ''))];
  if (wanted.length === 0) return own;
  const denied = wanted.filter((s) => !hasPermission(own, s));
  if (denied.length > 0) {
    throw new OAuthError(400, 'invalid_scope', `The requested scope exceeds the user's permissions: ${denied.join(' ')}`);
  }
  return wanted;
}
