/**
 * Node-RED's rules for credentials sent inline on a node (`credentials.extract`). The editor only
 * sends what changed and never sends passwords back, hence the markers: a missing (undefined)
 * value and, for password fields, the literal "__PWRD__" mean "keep the stored value"; an empty or
 * whitespace-only string (or null) deletes the key.
 */

export interface CredentialField {
  type: 'text' | 'password';
}

export type CredentialDefinition = Record<string, CredentialField>;

/**
 * A type's credential definition: undefined = type unknown or not loaded, null = registered
 * without credentials.
 */
export type DefinitionLookup = (type: string) => CredentialDefinition | undefined | null;

const PASSWORD_PLACEHOLDER = '__PWRD__';

type Creds = Record<string, unknown>;

function isSubflowType(type: string): boolean {
  return type === 'subflow' || type.startsWith('subflow:');
}

/** Types whose credentials have no definition: every key is taken and shown as `has_<key>`. */
export function isFreeFormType(type: string): boolean {
  return type === 'tab' || type === 'group' || isSubflowType(type);
}

const isBlank = (v: unknown) => v === null || (typeof v === 'string' && v.trim() === '');

/** Applies one incoming value to `target`, which starts as the stored credentials or as {}. */
function applyValue(target: Creds, old: Creds, key: string, value: unknown, placeholderAllowed: boolean): void {
  if (value === undefined || (placeholderAllowed && value === PASSWORD_PLACEHOLDER)) {
    if (key in old) target[key] = structuredClone(old[key]);
  } else if (isBlank(value)) {
    delete target[key];
  } else {
    target[key] = structuredClone(value);
  }
}

export type InlineResult =
  | { kind: 'set'; credentials: Creds }
  | { kind: 'ignored' };

/**
 * The node's credentials after applying `incoming` to `old` (the stored ones, or {}).
 * `ignored` = the type is registered without credentials, so nothing may be stored for it.
 */
export function applyInline(type: string, old: Creds, incoming: Creds, definitionOf: DefinitionLookup): InlineResult {
  if (isSubflowType(type)) {
    // A subflow instance sends its complete env credentials: keys it leaves out are removed.
    const next: Creds = {};
    for (const [key, value] of Object.entries(incoming)) applyValue(next, old, key, value, true);
    return { kind: 'set', credentials: next };
  }
  if (type === 'global-config') return { kind: 'set', credentials: applyGlobalConfig(old, incoming) };
  const definition = isFreeFormType(type) ? undefined : definitionOf(type);
  if (definition === null) return { kind: 'ignored' };
  const next = structuredClone(old);
  if (definition === undefined) {
    for (const [key, value] of Object.entries(incoming)) applyValue(next, old, key, value, true);
  } else {
    for (const [key, field] of Object.entries(definition)) {
      applyValue(next, old, key, incoming[key], field.type === 'password');
    }
  }
  return { kind: 'set', credentials: next };
}

/**
 * The global-config node keeps its env credentials in a nested `map`, sent complete by the editor
 * with placeholders for unchanged values; other keys follow the free-form rules.
 */
function applyGlobalConfig(old: Creds, incoming: Creds): Creds {
  const next = structuredClone(old);
  for (const [key, value] of Object.entries(incoming)) {
    if (key !== 'map' || typeof value !== 'object' || value === null || Array.isArray(value)) {
      applyValue(next, old, key, value, true);
      continue;
    }
    const oldMap = typeof old.map === 'object' && old.map !== null ? (old.map as Creds) : {};
    const map: Creds = {};
    for (const [name, v] of Object.entries(value as Creds)) applyValue(map, oldMap, name, v, true);
    next.map = map;
  }
  return next;
}
