/**
 * Node-RED's `adminAuth.type: "strategy"` block and `httpAdminCookieOptions`, read as Node-RED reads
 * them: a Passport strategy class from the settings file, its options (with `verify`), and the users
 * allowed in, as a list or a function of the username.
 */
import { SettingsError } from './settings-error.js';

/** A user allowed in through the strategy: no password, the provider vouches for them. */
export interface StrategyUser {
  username: string;
  permissions: string | string[];
}

/** Node-RED's `adminAuth.users` function: the user for a username, or null to refuse them. */
export type UsersFunction = (username: string) => unknown;

/** A Passport strategy class, as `require("passport-…").Strategy` gives it. */
export type PassportStrategyClass = new (options: Record<string, unknown>, verify: (...args: unknown[]) => unknown) => object;

export interface StrategySettings {
  /** Passport's name for it; only shown in logs (one strategy runs). */
  name: string;
  label: string;
  icon?: string;
  autoLogin: boolean;
  strategy: PassportStrategyClass;
  /** Given to the strategy's constructor unchanged; `verify` and `callbackMethod` are read too. */
  options: Record<string, unknown>;
}

/** The login session cookie's attributes (express-session's names, as Node-RED passes them on). */
export interface CookieOptions {
  name: string;
  path: string;
  domain?: string;
  secure: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  /** Milliseconds; absent: a browser-session cookie. */
  maxAge?: number;
}


type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPermissions = (p: unknown) => typeof p === 'string' || (Array.isArray(p) && p.every((x) => typeof x === 'string'));

export function parseStrategy(v: unknown): StrategySettings {
  const where = 'adminAuth.strategy';
  if (!isObject(v)) throw new SettingsError(`${where} must be {name, label, strategy, options} from a .js settings file`);
  if (typeof v.strategy !== 'function') {
    throw new SettingsError(`${where}.strategy must be a Passport strategy class, e.g. require("passport-openidconnect").Strategy`);
  }
  const options = v.options === undefined ? {} : v.options;
  if (!isObject(options)) throw new SettingsError(`${where}.options must be an object`);
  if (options.verify !== undefined && typeof options.verify !== 'function') throw new SettingsError(`${where}.options.verify must be a function`);
  for (const key of ['name', 'label', 'icon'] as const) {
    if (v[key] !== undefined && typeof v[key] !== 'string') throw new SettingsError(`${where}.${key} must be a string`);
  }
  return {
    name: typeof v.name === 'string' ? v.name : 'strategy',
    label: typeof v.label === 'string' ? v.label : '',
    ...(typeof v.icon === 'string' ? { icon: v.icon } : {}),
    autoLogin: v.autoLogin === true,
    strategy: v.strategy as PassportStrategyClass,
    options,
  };
}

/** `adminAuth.users` in strategy mode: a function, a list, one user, or none (nobody gets in). */
export function parseStrategyUsers(v: unknown): StrategyUser[] | UsersFunction {
  if (typeof v === 'function') return v as UsersFunction;
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((u: unknown, i) => {
    const where = `adminAuth.users[${i}]`;
    if (!isObject(u) || typeof u.username !== 'string' || u.username === '') throw new SettingsError(`${where} must be {username, permissions}`);
    if (!isPermissions(u.permissions)) throw new SettingsError(`${where}.permissions must be a string or an array of strings`);
    return { username: u.username, permissions: u.permissions as string | string[] };
  });
}

const SAME_SITE: Record<string, CookieOptions['sameSite']> = { strict: 'Strict', lax: 'Lax', none: 'None' };

/**
 * Node-RED's defaults (`path: "/"`, not Secure, a browser-session cookie) with the setting's own
 * over them. The cookie is always HttpOnly: no page script has any use for it.
 */
export function parseCookieOptions(v: unknown): CookieOptions {
  const base: CookieOptions = { name: 'connect.sid', path: '/', secure: false };
  if (v === undefined) return base;
  if (!isObject(v)) throw new SettingsError('httpAdminCookieOptions must be an object');
  const cookieText = (key: string) => {
    const value = v[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^[\x21-\x3a\x3c-\x7e]+$/.test(value)) throw new SettingsError(`httpAdminCookieOptions.${key} must be a cookie-safe string`);
    return value;
  };
  const name = cookieText('name');
  const path = cookieText('path');
  const domain = cookieText('domain');
  let sameSite: CookieOptions['sameSite'];
  if (v.sameSite === true) sameSite = 'Strict';
  else if (typeof v.sameSite === 'string' && SAME_SITE[v.sameSite.toLowerCase()]) sameSite = SAME_SITE[v.sameSite.toLowerCase()];
  else if (v.sameSite !== undefined && v.sameSite !== false) throw new SettingsError('httpAdminCookieOptions.sameSite must be "strict", "lax", "none", true or false');
  const maxAge = v.maxAge;
  if (maxAge !== undefined && maxAge !== null && !(typeof maxAge === 'number' && Number.isFinite(maxAge) && maxAge > 0)) {
    throw new SettingsError('httpAdminCookieOptions.maxAge must be a positive number of milliseconds');
  }
  return {
    name: name ?? base.name,
    path: path ?? base.path,
    ...(domain ? { domain } : {}),
    secure: v.secure === true,
    ...(sameSite ? { sameSite } : {}),
    ...(typeof maxAge === 'number' ? { maxAge } : {}),
  };
}
