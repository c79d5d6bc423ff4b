import type { Catalogs } from '../../registry/host.js';

/** Message catalogs of one namespace, by language (e.g. `en-US`). */
export type { Catalogs };

/** i18next's fallback language in Node-RED. */
const FALLBACK = 'en-US';

/**
 * Every namespace's catalogs in one runtime, so `RED._("other/set:key")` and `"node-red:…"` keys
 * resolve across modules, as with Node-RED's shared i18next instance.
 */
export class MessageCatalogs {
  private readonly namespaces = new Map<string, Catalogs>();
  /** Languages to try, most preferred first (`de-CH` → de-CH, de, en-US, en). */
  readonly languages: string[];

  constructor(lang = FALLBACK) {
    const base = lang.split('-')[0];
    this.languages = [...new Set([lang, base, FALLBACK, 'en'])];
  }

  register(namespace: string, catalogs: Catalogs): void {
    this.namespaces.set(namespace, catalogs);
  }

  /** The string for `key` in `namespace`, trying each language in turn; undefined when missing. */
  lookup(namespace: string, key: string): unknown {
    const catalogs = this.namespaces.get(namespace);
    if (!catalogs) return undefined;
    for (const lang of this.languages) {
      const catalog = catalogs[lang];
      if (!catalog) continue;
      const value = key.split('.').reduce<unknown>((o, part) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[part] : undefined), catalog);
      if (value !== undefined) return value;
    }
    return undefined;
  }
}

/**
 * RED._ for one node set. A key without `:` belongs to the set's namespace; `__name__` (and
 * `__a.b__`) placeholders are filled from `subs`, and a numeric `subs.count` other than 1 picks a
 * `_plural` (or `_other`) variant, as Node-RED's i18next does. A missing key returns the key without
 * its namespace.
 */
export function createTranslator(namespace: string, catalogs: MessageCatalogs) {
  return (key: string, subs?: Record<string, unknown>): string => {
    const colon = key.indexOf(':');
    const ns = colon === -1 ? namespace : key.slice(0, colon);
    const local = colon === -1 ? key : key.slice(colon + 1);
    let value: unknown;
    const count = subs?.count;
    if (typeof count === 'number') {
      const variants = count === 1 ? [`${local}_one`] : [`${local}_plural`, `${local}_other`];
      for (const v of variants) if ((value = catalogs.lookup(ns, v)) !== undefined) break;
    }
    value ??= catalogs.lookup(ns, local);
    if (typeof value !== 'string') return local;
    return subs ? interpolate(value, subs) : value;
  };
}

function interpolate(text: string, subs: Record<string, unknown>): string {
  return text.replace(/__([\w.$-]+)__/g, (match, name: string) => {
    const value = name.split('.').reduce<unknown>((o, part) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[part] : undefined), subs);
    return value === undefined ? match : String(value);
  });
}

const registries = new WeakMap<object, MessageCatalogs>();

/** The catalogs of one runtime (keyed by its settings object), created with its language. */
export function catalogsFor(owner: object, lang?: string): MessageCatalogs {
  let catalogs = registries.get(owner);
  if (!catalogs) {
    catalogs = new MessageCatalogs(lang);
    registries.set(owner, catalogs);
  }
  return catalogs;
}
