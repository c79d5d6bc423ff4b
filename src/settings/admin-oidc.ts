/**
 * `adminAuth.type: "oidc"`: Runnel's own OpenID Connect login, configured by the provider's
 * issuer and the client registered there, with the provider's groups mapped to permissions.
 */
import { SettingsError } from './settings-error.js';

export interface OidcSettings {
  /** The issuer URL; its `/.well-known/openid-configuration` describes the provider. */
  issuer: string;
  clientId: string;
  /** Absent for a public client (PKCE alone). */
  clientSecret?: string;
  /** Always starts with `openid`. */
  scope: string;
  /** The ID-token claim listing the user's groups (or roles). */
  groupsClaim: string;
  /** The claim that names the user in Runnel; `sub` when the token lacks it. */
  usernameClaim: string;
  /** Permissions by group: a user gets those of every group they are in; none: no access. */
  permissions: Record<string, string | string[]>;
  label: string;
  icon?: string;
  autoLogin: boolean;
  /** The redirect URI registered at the provider; by default the admin root's auth/strategy/callback on the request's host. */
  callbackURL?: string;
}


type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPermissions = (p: unknown) => typeof p === 'string' || (Array.isArray(p) && p.every((x) => typeof x === 'string'));

function absoluteUrl(v: unknown, key: string, secure: boolean): string {
  let url: URL;
  try {
    url = new URL(String(v));
  } catch {
    throw new SettingsError(`adminAuth.${key} must be an absolute http(s) URL`);
  }
  if (typeof v !== 'string' || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new SettingsError(`adminAuth.${key} must be an absolute http(s) URL`);
  // Tokens and the client secret travel to the issuer: plain http only to this machine.
  if (secure && url.protocol === 'http:' && !isLoopback(url.hostname)) throw new SettingsError(`adminAuth.${key} must use https (http only for 127.0.0.1, ::1 or localhost)`);
  return v;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

export function parseOidc(v: Raw): OidcSettings {
  const text = (key: string, required: boolean): string | undefined => {
    const value = v[key];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value === '') throw new SettingsError(`adminAuth.${key} must be a non-empty string`);
    return value;
  };
  const issuer = absoluteUrl(v.issuer, 'issuer', true);
  const clientId = text('clientId', true)!;
  const clientSecret = text('clientSecret', false);
  const scope = text('scope', false) ?? 'openid profile email';
  if (!scope.split(' ').includes('openid')) throw new SettingsError('adminAuth.scope must include "openid"');
  const permissions = v.permissions ?? {};
  if (!isObject(permissions) || !Object.values(permissions).every(isPermissions)) {
    throw new SettingsError('adminAuth.permissions must map group names to permissions: {"admins": "*", "viewers": "read"}');
  }
  return {
    issuer,
    clientId,
    ...(clientSecret === undefined ? {} : { clientSecret }),
    scope,
    groupsClaim: text('groupsClaim', false) ?? 'groups',
    usernameClaim: text('usernameClaim', false) ?? 'preferred_username',
    permissions: permissions as Record<string, string | string[]>,
    label: text('label', false) ?? `Sign in with ${new URL(issuer).host}`,
    ...(v.icon === undefined ? {} : { icon: text('icon', true)! }),
    autoLogin: v.autoLogin === true,
    ...(v.callbackURL === undefined ? {} : { callbackURL: absoluteUrl(v.callbackURL, 'callbackURL', false) }),
  };
}
