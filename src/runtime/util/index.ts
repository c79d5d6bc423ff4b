/** RED.util: the assembled helper object handed to node modules, plus typed named exports. */
import { cloneMessage } from './clone.js';
import { encodeObject } from './encode.js';
import { evaluateEnvProperty, getSetting } from './env.js';
import { evaluateNodeProperty } from './evaluate.js';
import { normalisePropertyExpression } from './expression.js';
import { generateId } from './id.js';
import { evaluateJSONataExpression, prepareJSONataExpression } from './jsonata.js';
import { getMessageProperty, getObjectProperty, setMessageProperty, setObjectProperty } from './properties.js';
import { compareObjects, ensureBuffer, ensureString, normaliseNodeTypeName, parseContextStore } from './values.js';

export { cloneDeep, cloneMessage } from './clone.js';
export { encodeObject, safeStringify, type Encodable, type EncodeOptions } from './encode.js';
export { evaluateEnvProperty, getSetting, type EnvNode } from './env.js';
export { evaluateNodeProperty } from './evaluate.js';
export { normalisePropertyExpression, parsePath, type PathPart } from './expression.js';
export { formatDate } from './moment/date-format.js';
export { generateId } from './id.js';
export { evaluateJSONataExpression, prepareJSONataExpression, type PreparedJSONata } from './jsonata.js';
export { getMessageProperty, getObjectProperty, setMessageProperty, setObjectProperty } from './properties.js';
export { compareObjects, ensureBuffer, ensureString, normaliseNodeTypeName, parseContextStore } from './values.js';
export * from './types.js';

/** Not frozen: Node-RED's is a plain object, and modules may add to it. */
export const util = {
  cloneMessage,
  compareObjects,
  encodeObject,
  ensureBuffer,
  ensureString,
  evaluateEnvProperty,
  evaluateJSONataExpression,
  evaluateNodeProperty,
  generateId,
  getMessageProperty,
  getObjectProperty,
  getSetting,
  normaliseNodeTypeName,
  normalisePropertyExpression,
  parseContextStore,
  prepareJSONataExpression,
  setMessageProperty,
  setObjectProperty,
};

export type RedUtil = typeof util;
