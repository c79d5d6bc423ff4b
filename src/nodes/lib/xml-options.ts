/**
 * The xml2js options a flow may pass in `msg.options`, read as xml2js 0.6 reads them: its defaults
 * overlaid by the message's own properties, each tested for truthiness where xml2js tests it.
 * Options given as functions (processors) only arrive from function nodes; they are applied when
 * present. `validator`, `xmlns`, `async`/`chunkSize`, `preserveChildrenOrder` (and so
 * `includeWhiteChars`, which only acts with it) and `allowSurrogateChars` are not emulated.
 *
 * `strict: false` skips the well-formedness check and upper-cases element and attribute names as
 * sax's loose mode does; beyond that fast-xml-parser's own leniency stands in for sax's recovery
 * (unquoted or valueless attributes are dropped, an unclosed root still yields its object where
 * xml2js yields null).
 */

type Processor = (value: string, name?: string) => string;

export interface ParseOptions {
  attrkey: string;
  charkey: string;
  explicitArray: boolean;
  explicitRoot: boolean;
  explicitCharkey: boolean;
  mergeAttrs: boolean;
  ignoreAttrs: boolean;
  trim: boolean;
  normalize: boolean;
  explicitChildren: boolean;
  childkey: string;
  charsAsChildren: boolean;
  /** Whether the text is well-formed XML: false accepts what sax accepts in its loose mode. */
  strict: boolean;
  /** What an element with neither attributes, children nor text becomes ('' = its whitespace). */
  emptyTag: unknown;
  tagNameProcessors: Processor[] | null;
  attrNameProcessors: Processor[] | null;
  attrValueProcessors: Processor[] | null;
  valueProcessors: Processor[] | null;
}

export interface RenderOptions {
  pretty: boolean;
  indent: string;
  newline: string;
  offset: number;
  allowEmpty: boolean;
  spaceBeforeSlash: string;
  dontPrettyTextNodes: boolean;
}

export interface BuildOptions {
  attrkey: string;
  charkey: string;
  /** The root element's name; anything but 'root' wraps even a single-key object. */
  rootName: string;
  /** The declaration's fields, or null for `headless`. */
  declaration: { version: string; encoding?: string; standalone?: string } | null;
  doctype: { pubID?: string; sysID?: string } | null;
  render: RenderOptions;
  /** Text containing &, < or > goes out as CDATA. */
  cdata: boolean;
}

type Options = Record<string, unknown>;

const own = (o: Options, key: string) => Object.prototype.hasOwnProperty.call(o, key);
const pick = (o: Options, key: string, fallback: unknown): unknown => (own(o, key) ? o[key] : fallback);

function processors(o: Options, key: string): Processor[] | null {
  const value = o[key];
  return Array.isArray(value) && value.every((f) => typeof f === 'function') && value.length > 0 ? (value as Processor[]) : null;
}

const lowerCase: Processor = (name) => name.toLowerCase();

/** Parser options for `o` (msg.options, already given its attrkey/charkey as Node-RED does). */
export function parseOptions(o: Options): ParseOptions {
  const tagNames = processors(o, 'tagNameProcessors');
  return {
    attrkey: String(pick(o, 'attrkey', '$')),
    charkey: String(pick(o, 'charkey', '_')),
    explicitArray: Boolean(pick(o, 'explicitArray', true)),
    explicitRoot: Boolean(pick(o, 'explicitRoot', true)),
    explicitCharkey: Boolean(o.explicitCharkey),
    mergeAttrs: Boolean(o.mergeAttrs),
    ignoreAttrs: Boolean(o.ignoreAttrs),
    trim: Boolean(o.trim),
    normalize: Boolean(o.normalize),
    explicitChildren: Boolean(o.explicitChildren),
    childkey: String(pick(o, 'childkey', '$$')),
    charsAsChildren: Boolean(o.charsAsChildren),
    strict: Boolean(pick(o, 'strict', true)),
    emptyTag: pick(o, 'emptyTag', ''),
    tagNameProcessors: o.normalizeTags ? [lowerCase, ...(tagNames ?? [])] : tagNames,
    attrNameProcessors: processors(o, 'attrNameProcessors'),
    attrValueProcessors: processors(o, 'attrValueProcessors'),
    valueProcessors: processors(o, 'valueProcessors'),
  };
}

function renderOptions(r: unknown): RenderOptions {
  const o = (r !== null && typeof r === 'object' ? r : {}) as Options;
  const slash = o.spaceBeforeSlash ?? o.spacebeforeslash ?? '';
  return {
    pretty: Boolean(o.pretty),
    indent: String(o.indent ?? '  '),
    newline: String(o.newline ?? '\n'),
    offset: Number(o.offset ?? 0),
    allowEmpty: Boolean(o.allowEmpty),
    spaceBeforeSlash: slash === true ? ' ' : String(slash),
    dontPrettyTextNodes: Boolean(o.dontPrettyTextNodes ?? o.dontprettytextnodes),
  };
}

/** xmlbuilder's checks on the declaration, with its messages. */
function declaration(xmldec: unknown): BuildOptions['declaration'] {
  const d = (xmldec !== null && typeof xmldec === 'object' ? xmldec : {}) as Options;
  const version = String(d.version || '1.0');
  if (!/1\.[0-9]+/.test(version)) throw new Error(`Invalid version number: ${version}`);
  const out: NonNullable<BuildOptions['declaration']> = { version };
  if (d.encoding !== null && d.encoding !== undefined) {
    const encoding = String(d.encoding);
    if (!/^[A-Za-z](?:[A-Za-z0-9._-])*$/.test(encoding)) throw new Error(`Invalid encoding: ${encoding}`);
    out.encoding = encoding;
  }
  if (d.standalone !== null && d.standalone !== undefined) out.standalone = d.standalone ? 'yes' : 'no';
  return out;
}

/** xmlbuilder's DOCTYPE ids: a lone id is the system id. */
function doctypeOf(d: Options | null): BuildOptions['doctype'] {
  if (!d || (d.pubID == null && d.sysID == null)) return null;
  return d.sysID == null ? { sysID: String(d.pubID) } : { pubID: d.pubID == null ? undefined : String(d.pubID), sysID: String(d.sysID) };
}

const XMLDEC = { version: '1.0', encoding: 'UTF-8', standalone: true };

/** Builder options for `o` (msg.options); without it Node-RED builds compactly. */
export function buildOptions(o: Options | undefined): BuildOptions {
  const opts = o ?? { renderOpts: { pretty: false } };
  const doctype = pick(opts, 'doctype', null) as Options | null;
  const headless = Boolean(opts.headless);
  return {
    attrkey: String(pick(opts, 'attrkey', '$')),
    charkey: String(pick(opts, 'charkey', '_')),
    rootName: String(pick(opts, 'rootName', 'root')),
    declaration: headless ? null : declaration(pick(opts, 'xmldec', XMLDEC)),
    doctype: headless ? null : doctypeOf(doctype),
    render: renderOptions(pick(opts, 'renderOpts', { pretty: true, indent: '  ', newline: '\n' })),
    cdata: Boolean(opts.cdata),
  };
}
