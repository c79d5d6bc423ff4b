type Catalog = Record<string, unknown>;

const isObject = (v: unknown): v is Catalog => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Node-RED's message catalogs (the editor's, the core nodes', every module's) are written for
 * i18next v3, where the plural of `key` is `key_plural`; the i18next of the 5.x editor reads only
 * `key_other`, and shows "2 plugin" without it. Node-RED renames the keys as it serves a catalog, an
 * `_other` the catalog has already winning; so does this, on a copy.
 */
export function withI18nextPlurals(catalog: Catalog): Catalog {
  const result: Catalog = {};
  for (const [key, value] of Object.entries(catalog)) {
    if (isObject(value)) result[key] = withI18nextPlurals(value);
    else if (!key.endsWith('_plural')) result[key] = value;
    else if (!Object.hasOwn(catalog, `${key.slice(0, -'_plural'.length)}_other`)) result[`${key.slice(0, -'_plural'.length)}_other`] = value;
  }
  return result;
}
