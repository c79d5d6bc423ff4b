/** Message catalogs of one namespace, by language (e.g. `en-US`). */
export type Catalogs = Record<string, Record<string, unknown>>;

/**
 * RED._ for one node set: keys without `:` are looked up in the set's own catalog; `__name__`
 * placeholders are substituted (i18next style). An unknown key returns the key itself.
 */
export function createTranslator(namespace: string, catalogs: Catalogs = {}) {
  const languages = Object.keys(catalogs);
  const preferred = ['en-US', 'en', ...languages].find((l) => catalogs[l]);
  const catalog = preferred ? catalogs[preferred] : undefined;
  return (key: string, subs?: Record<string, unknown>): string => {
    const local = key.includes(':') ? (key.startsWith(`${namespace}:`) ? key.slice(namespace.length + 1) : undefined) : key;
    let value: unknown = undefined;
    if (local !== undefined && catalog) {
      value = local.split('.').reduce<unknown>((o, part) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[part] : undefined), catalog);
    }
    if (typeof value !== 'string') return key;
    return subs ? value.replace(/__([\w.]+)__/g, (m, name: string) => (subs[name] === undefined ? m : String(subs[name]))) : value;
  };
}
