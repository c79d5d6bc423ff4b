/**
 * The xml node: an XML string on `property` becomes an object as xml2js 0.6 parses it, and an
 * object becomes XML text as xml2js's Builder writes it, following the xml2js options a flow puts
 * in `msg.options` (src/nodes/lib/xml-options.ts). By default (xml2js's shape, which Node-RED flows
 * expect) the root element is the only key, child elements are always arrays, attributes sit under
 * `attr` ("$") and text beside children or attributes under `chr` ("_"); building writes a
 * declaration and no indentation. As in Node-RED, the node's `attr`/`chr` keys apply to parsing
 * only: building reads `$` and `_` unless msg.options names other keys.
 */
import type * as FastXml from 'fast-xml-parser';
import { lazy } from '../base/lazy.js';
import { buildOptions, parseOptions, type BuildOptions, type ParseOptions, type RenderOptions } from './lib/xml-options.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import { onPropertyInput } from './lib/property-input.js';

/** fast-xml-parser's ordered form: `{name: children, ':@': attributes}` or `{'#text': text}`. */
type Ordered = Record<string, unknown>;
type Obj = Record<string, unknown>;

const ATTRS = ':@';
const TEXT = '#text';
const CDATA = '#cdata';

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

const elementName = (node: Ordered) => Object.keys(node).find((k) => k !== ATTRS) as string;

/** An own, enumerable property even for names like `__proto__`, as xml2js defines them. */
function define(obj: Obj, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

const processed = (fns: ((v: string, n?: string) => string)[] | null, value: string, name?: string) =>
  fns ? fns.reduce((v, fn) => fn(v, name), value) : value;

/** xml2js's assignOrPush, `in` test (prototype names included) and all. */
function assignOrPush(obj: Obj, key: string, value: unknown, o: ParseOptions): void {
  if (!(key in obj)) define(obj, key, o.explicitArray ? [value] : value);
  else {
    if (!(obj[key] instanceof Array)) define(obj, key, [obj[key]]);
    (obj[key] as unknown[]).push(value);
  }
}

/** An element's name as sax reports it (upper case in loose mode) after the name processors. */
const tagName = (raw: string, o: ParseOptions) => processed(o.tagNameProcessors, o.strict ? raw : raw.toUpperCase());

/** One element as xml2js's onopentag/ontext/onclosetag build it. */
function toValue(children: Ordered[], attributes: Record<string, string> | undefined, nodeName: string, o: ParseOptions): unknown {
  const { attrkey, charkey } = o;
  let obj: Obj = {};
  obj[charkey] = '';
  if (attributes && !o.ignoreAttrs) {
    for (const [rawName, rawValue] of Object.entries(attributes)) {
      if (!(attrkey in obj) && !o.mergeAttrs) define(obj, attrkey, {});
      const name = processed(o.attrNameProcessors, o.strict ? rawName : rawName.toUpperCase());
      const value = processed(o.attrValueProcessors, rawValue, name);
      if (o.mergeAttrs) assignOrPush(obj, name, value, o);
      else define(obj[attrkey] as Obj, name, value);
    }
  }
  let cdata = false;
  for (const child of children) {
    if (TEXT in child) obj[charkey] += String(child[TEXT]);
    else if (CDATA in child) {
      for (const part of child[CDATA] as Ordered[]) obj[charkey] += String(part[TEXT] ?? '');
      cdata = true;
    } else {
      const raw = elementName(child);
      const name = tagName(raw, o);
      assignOrPush(obj, name, toValue(child[raw] as Ordered[], child[ATTRS] as Record<string, string> | undefined, name, o), o);
    }
  }
  let value: unknown = obj;
  let emptyStr: unknown;
  if (/^\s*$/.test(obj[charkey] as string) && !cdata) {
    emptyStr = obj[charkey];
    delete obj[charkey];
  } else {
    let text = obj[charkey] as string;
    if (o.trim) text = text.trim();
    if (o.normalize) text = text.replace(/\s{2,}/g, ' ').trim();
    obj[charkey] = processed(o.valueProcessors, text, nodeName);
    if (Object.keys(obj).length === 1 && charkey in obj && !o.explicitCharkey) value = obj[charkey];
  }
  if (value === obj && Object.keys(obj).length === 0) value = o.emptyTag !== '' ? o.emptyTag : emptyStr;
  if (o.explicitChildren && !o.mergeAttrs && typeof value === 'object' && value !== null) {
    obj = value as Obj;
    const node: Obj = {};
    if (attrkey in obj) {
      node[attrkey] = obj[attrkey];
      delete obj[attrkey];
    }
    if (!o.charsAsChildren && charkey in obj) {
      node[charkey] = obj[charkey];
      delete obj[charkey];
    }
    if (Object.getOwnPropertyNames(obj).length > 0) node[o.childkey] = obj;
    value = node;
  }
  return value;
}

function parseXml(text: string, o: ParseOptions): unknown {
  if (text.trim() === '') return null;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (o.strict) {
    const valid = fastXml().XMLValidator.validate(text);
    if (valid !== true) throw new Error(`${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  }
  parser ??= new (fastXml().XMLParser)(parserOptions);
  const root = (parser.parse(text) as Ordered[]).find((n) => !(TEXT in n) && !(CDATA in n));
  if (!root) throw new Error('No root element');
  const raw = elementName(root);
  const name = tagName(raw, o);
  const value = toValue(root[raw] as Ordered[], root[ATTRS] as Record<string, string> | undefined, name, o);
  if (!o.explicitRoot) return value;
  const top: Obj = {};
  define(top, name, value);
  return top;
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

// xmlbuilder refuses element and attribute names that are not XML names.
const XML_NAME = /^([:A-Z_a-z\xC0-\xD6\xD8-\xF6\xF8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]|[\uD800-\uDB7F][\uDC00-\uDFFF])([\x2D\.0-:A-Z_a-z\xB7\xC0-\xD6\xD8-\xF6\xF8-\u037D\u037F-\u1FFF\u200C\u200D\u203F\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]|[\uD800-\uDB7F][\uDC00-\uDFFF])*$/;

function xmlName(name: string): string {
  if (!XML_NAME.test(name)) throw new Error('Invalid character in name');
  return name;
}

/** An element of the document being built; its text children are already escaped (or CDATA). */
class Element {
  readonly attrs = new Map<string, string>();
  readonly children: (Element | string)[] = [];
  readonly name: string;
  constructor(name: string) {
    this.name = xmlName(name);
  }

  child(name: string): Element {
    const el = new Element(name);
    this.children.push(el);
    return el;
  }
}

const needsCdata = (s: unknown): s is string => typeof s === 'string' && (s.includes('&') || s.includes('>') || s.includes('<'));

/** xmlbuilder's text node: text (or, with the cdata option, CDATA where escaping would be needed). */
function addText(el: Element, value: unknown, o: BuildOptions): void {
  if (o.cdata && needsCdata(value)) el.children.push(`<![CDATA[${value.replace(']]>', ']]]]><![CDATA[>')}]]>`);
  else if (value === null || value === undefined) throw new Error(`Missing element text. parent: <${el.name}>`);
  else el.children.push(escapeText(String(value)));
}

/** xml2js's Builder.render. */
function render(el: Element, obj: unknown, o: BuildOptions): Element {
  if (typeof obj !== 'object') addText(el, obj, o);
  else if (Array.isArray(obj)) {
    // for..in over each entry: a string's characters become elements named by their index.
    for (const child of obj) {
      for (const [key, entry] of Object.entries(Object(child))) render(el.child(key), entry, o);
    }
  } else if (obj !== null) {
    for (const [key, child] of Object.entries(obj)) {
      if (key === o.attrkey) {
        if (child === null || typeof child !== 'object') continue;
        for (const [name, value] of Object.entries(child)) {
          if (value !== null && value !== undefined) el.attrs.set(xmlName(name), escapeAttr(String(value)));
        }
      } else if (key === o.charkey) addText(el, child, o);
      else if (Array.isArray(child)) {
        for (const entry of child) {
          if (typeof entry === 'string') addText(el.child(key), entry, o);
          else render(el.child(key), entry, o);
        }
      } else if (typeof child === 'object' && child !== null) render(el.child(key), child, o);
      else addText(el.child(key), child === null || child === undefined ? '' : String(child), o);
    }
  }
  return el;
}

/** xmlbuilder's string writer: indentation and newlines only when pretty. */
class Writer {
  private suppressed = 0;
  constructor(private readonly r: RenderOptions) {}

  private indent(level: number): string {
    return !this.r.pretty || this.suppressed ? '' : this.r.indent.repeat(Math.max(0, level + this.r.offset));
  }

  private endline(): string {
    return !this.r.pretty || this.suppressed ? '' : this.r.newline;
  }

  line(text: string, level: number): string {
    return this.indent(level) + text + this.endline();
  }

  element(el: Element, level: number): string {
    const { name, children } = el;
    let out = this.indent(level) + '<' + name;
    for (const [attr, value] of el.attrs) out += ` ${attr}="${value}"`;
    if (children.every((c) => c === '')) {
      return out + (this.r.allowEmpty ? `></${name}>` : `${this.r.spaceBeforeSlash}/>`) + this.endline();
    }
    if (this.r.pretty && children.length === 1 && typeof children[0] === 'string') {
      this.suppressed++;
      out += '>' + this.line(children[0], level + 1);
      this.suppressed--;
      return out + `</${name}>` + this.endline();
    }
    const held = this.r.dontPrettyTextNodes && children.some((c) => typeof c === 'string');
    if (held) this.suppressed++;
    out += '>' + this.endline();
    for (const child of children) out += typeof child === 'string' ? this.line(child, level + 1) : this.element(child, level + 1);
    out += this.indent(level) + `</${name}>`;
    if (held) this.suppressed--;
    return out + this.endline();
  }
}

function buildXml(value: object, o: BuildOptions): string {
  let name = o.rootName;
  let content: unknown = value;
  const top = Object.keys(value);
  if (top.length === 1 && name === 'root') {
    name = top[0];
    content = (value as Obj)[name];
  }
  const root = render(new Element(name), content, o);
  const w = new Writer(o.render);
  const slash = o.render.spaceBeforeSlash;
  let out = '';
  const d = o.declaration;
  if (d) {
    out += w.line(`<?xml version="${d.version}"${d.encoding === undefined ? '' : ` encoding="${d.encoding}"`}`
      + `${d.standalone === undefined ? '' : ` standalone="${d.standalone}"`}${slash}?>`, 0);
  }
  if (o.doctype) {
    const { pubID, sysID } = o.doctype;
    out += w.line(`<!DOCTYPE ${name}${pubID && sysID ? ` PUBLIC "${pubID}" "${sysID}"` : sysID ? ` SYSTEM "${sysID}"` : ''}${slash}>`, 0);
  }
  out += w.element(root, 0);
  const nl = o.render.newline;
  return o.render.pretty && out.endsWith(nl) ? out.slice(0, out.length - nl.length) : out;
}

const COMPACT = buildOptions(undefined);

export default function (RED: RedApi) {
  class XmlNode extends RED.nodes.Node {
    private readonly attrkey: string;
    private readonly charkey: string;
    private readonly parseDefaults: ParseOptions;
    private readonly property: string;

    constructor(config: NodeConfig) {
      super(config);
      this.attrkey = (config.attr as string) || '';
      this.charkey = (config.chr as string) || '';
      this.parseDefaults = parseOptions({ attrkey: this.attrkey || '$', charkey: this.charkey || '_' });
      this.property = (config.property as string) || 'payload';
      onPropertyInput(RED, this, this.property, (value: any, msg: Msg, send: SendFn, done: DoneFn) => {
        if (value === null || (typeof value !== 'object' && typeof value !== 'string')) {
          this.warn('This node only handles xml strings or js objects.');
          done();
          return;
        }
        let out: unknown;
        try {
          out = typeof value === 'string' ? parseXml(value, this.parsing(msg)) : buildXml(value, this.building(msg));
        } catch (err) {
          done(err);
          return;
        }
        RED.util.setMessageProperty(msg, this.property, out);
        send(msg);
        done();
      });
    }

    /** Node-RED hands msg.options itself to xml2js, after writing its keys into it. */
    private parsing(msg: Msg): ParseOptions {
      if (!Object.hasOwn(msg, 'options') || typeof msg.options !== 'object') return this.parseDefaults;
      const options = msg.options as Obj;
      options.async = true;
      options.attrkey = this.attrkey || options.attrkey || '$';
      options.charkey = this.charkey || options.charkey || '_';
      return parseOptions(options);
    }

    private building(msg: Msg): BuildOptions {
      if (!Object.hasOwn(msg, 'options') || typeof msg.options !== 'object') return COMPACT;
      const options = msg.options as Obj;
      options.async = false;
      return buildOptions(options);
    }
  }

  RED.nodes.registerType('xml', XmlNode);
}
