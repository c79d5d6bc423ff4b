import { anyObject, noContent } from '../schemas.js';

/** Response schemas of the editor's routes, for the OpenAPI document; bodies are Node-RED's shapes. */
export const objectAnswer = { 200: anyObject } as const;
export const arrayAnswer = { 200: { type: 'array', items: {} } } as const;
export const noContentAnswer = { 204: noContent } as const;
/** A file or page sent as it is (its own content type). */
export const fileAnswer = { 200: { type: 'string', description: 'the file, with its own content type' } } as const;
/** JSON, or HTML when the request asks for `text/html` (the editor's node definitions). */
export const objectOrHtml = { 200: { anyOf: [anyObject, { type: 'string' }], description: 'JSON; HTML with Accept: text/html' } } as const;
export const arrayOrHtml = { 200: { anyOf: [{ type: 'array', items: {} }, { type: 'string' }], description: 'JSON; HTML with Accept: text/html' } } as const;
export const textOrArray = { 200: { anyOf: [{ type: 'array', items: {} }, { type: 'string' }], description: 'a folder listing, or an entry' } } as const;
