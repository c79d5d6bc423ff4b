import { anyObject, noContent, nodeSet } from '../schemas.js';

/**
 * Response schemas of the editor's routes, for the OpenAPI document; bodies are Node-RED's shapes.
 * Routes that answer HTML or files declare their media types, so the document says what comes back.
 */

const json = (schema: object) => ({ 'application/json': { schema } });
const html = { 'text/html': { schema: { type: 'string' } } } as const;
const notModified = { 304: { type: 'null', description: 'Not modified (If-None-Match matched the ETag)' } } as const;

/** An entry of GET /plugins. */
const pluginSet = {
  type: 'object',
  required: ['id', 'name', 'enabled', 'module', 'plugins'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    local: { type: 'boolean' },
    user: { type: 'boolean' },
    module: { type: 'string' },
    plugins: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' }, module: { type: 'string' } }, additionalProperties: true } },
    editor: { type: 'boolean' },
    runtime: { type: 'boolean' },
    version: { type: 'string' },
    err: { type: 'string' },
  },
  additionalProperties: true,
} as const;

/** A context value as the Context sidebar shows it (the debug sidebar's encoding). */
const encodedValue = {
  type: 'object',
  required: ['msg'],
  properties: { msg: {}, format: { type: 'string' } },
  additionalProperties: true,
} as const;

/** A message catalog: nested objects of strings. */
const catalog = { type: 'object', additionalProperties: true, description: 'i18next catalog' } as const;

export const noContentAnswer = { 204: noContent } as const;

/** A page, a file or an icon, sent as it is with its own content type. */
export const fileAnswer = {
  200: { description: 'the file, with its own content type', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
  ...notModified,
} as const;

export const pageAnswer = {
  200: { description: "the editor's page", content: html },
  ...notModified,
  301: { type: 'null', description: 'Redirect to the same path with a trailing slash' },
} as const;

export const themeAnswer = {
  200: {
    type: 'object',
    required: ['page', 'header'],
    properties: { page: anyObject, header: anyObject, asset: anyObject, login: anyObject, menu: anyObject },
    additionalProperties: true,
  },
} as const;

/** GET /nodes/messages: every active set's catalog by namespace. */
export const catalogsAnswer = { 200: { type: 'object', additionalProperties: catalog } } as const;
export const catalogAnswer = { 200: catalog } as const;

/** GET /nodes/:module/:set: the set as JSON, or its editor HTML with Accept: text/html. */
export const nodeSetAnswer = { 200: { description: 'JSON; HTML with Accept: text/html', content: { ...json(nodeSet), ...html } } } as const;

/** GET /icons: icon file names by module. */
export const iconListAnswer = { 200: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } } as const;

/** GET /plugins: the plugin sets as JSON, or their editor templates with Accept: text/html. */
/** GET /plugins/:module/:set: the set as JSON, or its editor template with Accept: text/html. */
export const pluginSetAnswer = { 200: { description: 'JSON; HTML with Accept: text/html', content: { ...json(pluginSet), ...html } } } as const;
export const pluginsAnswer = { 200: { description: 'JSON; HTML with Accept: text/html', content: { ...json({ type: 'array', items: pluginSet }), ...html } } } as const;

export const userSettingsAnswer = { 200: { type: 'object', additionalProperties: true, description: "the user's editor settings" } } as const;

/** GET /context/...: one key's value, or every key by store. */
export const contextAnswer = {
  200: {
    anyOf: [encodedValue, { type: 'object', additionalProperties: { type: 'object', additionalProperties: encodedValue } }],
    description: "one key's value ({msg, format}), or each store's keys and values",
  },
} as const;

/** GET /library/:library/:type: a folder listing (sub-folders, then entries `{fn, ...meta}`), or an entry's text. */
export const libraryAnswer = {
  200: {
    description: "a folder listing as JSON, or an entry (a flow's JSON, other types' text)",
    content: {
      ...json({ anyOf: [{ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }] } }, {}] }),
      'text/plain': { schema: { type: 'string' } },
    },
  },
} as const;
