/**
 * The xml node: an XML string on `property` becomes an object in xml2js's default shape (what
 * Node-RED flows expect: root element as the only key, child elements always in arrays,
 * attributes under `attr` ("$"), text beside child elements or attributes under `chr` ("_")), and
 * such an object becomes XML text as xml2js's Builder writes it (declaration, no indentation).
 * As in Node-RED, the node's `attr`/`chr` keys apply to parsing only: building always reads `$` and
 * `_`, which is what objects built for a Node-RED flow use.
 */
import type * as FastXml from 'fast-xml-parser';
import { lazy } from '../lazy.js';
import { Node, type DoneFn, type Msg, type NodeConfig, type SendFn } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';

/** fast-xml-parser's ordered form: `{name: children, ':@': attributes}` or `{'#text': text}`. */
type Ordered = Record<string, unknown>;

const ATTRS = ':@';
const TEXT = '#text';
const CDATA = '#cdata';
const DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';

const fastXml = lazy<typeof FastXml>('fast-xml-parser');
let parser: FastXml.XMLParser | undefined;
const parserOptions: FastXml.X2jOptions = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: true,
  htmlEntities: true,
  cdataPropName: CDATA,
};

interface Keys {
  attr: string;
  chr: string;
}

const elementName = (node: Ordered) => Object.keys(node).find((k) => k !== ATTRS) as string;

/** One element in xml2js's shape, following its rules for text, whitespace and empty elements. */
function toObject(children: Ordered[], attributes: Record<string, string> | undefined, keys: Keys): unknown {
  let text = '';
  let cdata = false;
  const elements: Record<string, unknown[]> = {};
  for (const child of children) {
    if (TEXT in child) text += String(child[TEXT]);
    else if (CDATA in child) {
      for (const part of child[CDATA] as Ordered[]) text += String(part[TEXT] ?? '');
      cdata = true;
    } else {
      const name = elementName(child);
      (elements[name] ??= []).push(toObject(child[name] as Ordered[], child[ATTRS] as Record<string, string> | undefined, keys));
    }
  }
  const blank = !cdata && /^\s*$/.test(text);
  const obj: Record<string, unknown> = {};
  if (!blank) obj[keys.chr] = text;
  if (attributes) obj[keys.attr] = { ...attributes };
  Object.assign(obj, elements);
  const names = Object.keys(obj);
  if (names.length === 1 && !blank) return text;
  // An empty element is its (whitespace) text, as in xml2js.
  if (names.length === 0) return text;
  return obj;
}

function parseXml(text: string, keys: Keys): Record<string, unknown> {
  const valid = fastXml().XMLValidator.validate(text);
  if (valid !== true) throw new Error(`${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  parser ??= new (fastXml().XMLParser)(parserOptions);
  const root = (parser.parse(text) as Ordered[]).find((n) => !(TEXT in n) && !(CDATA in n));
  if (!root) throw new Error('No root element');
  const name = elementName(root);
  return { [name]: toObject(root[name] as Ordered[], root[ATTRS] as Record<string, string> | undefined, keys) };
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

/** An element under construction: its attributes and the content rendered so far. */
class Element {
  attrs = '';
  body = '';
  constructor(readonly name: string) {}
  toString(): string {
    return this.body === '' ? `<${this.name}${this.attrs}/>` : `<${this.name}${this.attrs}>${this.body}</${this.name}>`;
  }
}

/** xml2js's Builder.render, writing into `el`. */
function render(el: Element, obj: unknown, keys: Keys): Element {
  if (obj === null || obj === undefined) return el;
  if (typeof obj !== 'object') {
    el.body += escapeText(String(obj));
  } else if (Array.isArray(obj)) {
    for (const child of obj) {
      if (child === null || typeof child !== 'object') continue;
      for (const [key, entry] of Object.entries(child)) el.body += render(new Element(key), entry, keys).toString();
    }
  } else {
    for (const [key, child] of Object.entries(obj)) {
      if (key === keys.attr) {
        if (child === null || typeof child !== 'object') continue;
        for (const [name, value] of Object.entries(child)) {
          if (value !== null && value !== undefined) el.attrs += ` ${name}="${escapeAttr(String(value))}"`;
        }
      } else if (key === keys.chr) {
        if (child !== null && child !== undefined) el.body += escapeText(String(child));
      } else if (Array.isArray(child)) {
        for (const entry of child) el.body += render(new Element(key), entry, keys).toString();
      } else {
        el.body += render(new Element(key), child, keys).toString();
      }
    }
  }
  return el;
}

function buildXml(value: object, keys: Keys): string {
  let name = 'root';
  let content: unknown = value;
  const top = Object.keys(value);
  if (!Array.isArray(value) && top.length === 1) {
    name = top[0];
    content = (value as Record<string, unknown>)[name];
  }
  return DECLARATION + render(new Element(name), content, keys).toString();
}

const BUILD_KEYS: Keys = { attr: '$', chr: '_' };

export default function (RED: RedApi) {
  class XmlNode extends Node {
    private readonly keys: Keys;
    private readonly property: string;

    constructor(config: NodeConfig) {
      super(config);
      this.keys = { attr: (config.attr as string) || '$', chr: (config.chr as string) || '_' };
      this.property = (config.property as string) || 'payload';
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        const value = RED.util.getMessageProperty(msg, this.property);
        if (value === undefined) {
          send(msg);
          done();
          return;
        }
        if (value === null || (typeof value !== 'object' && typeof value !== 'string')) {
          this.warn('This node only handles xml strings or js objects.');
          done();
          return;
        }
        let out: unknown;
        try {
          out = typeof value === 'string' ? parseXml(value, this.keys) : buildXml(value, BUILD_KEYS);
        } catch (err) {
          done(err);
          return;
        }
        RED.util.setMessageProperty(msg, this.property, out);
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('xml', XmlNode);
}
