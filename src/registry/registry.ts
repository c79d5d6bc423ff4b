import { EventEmitter } from 'node:events';
import { RunnelError } from '../base/errors.js';

export type CredentialDefinition = Record<string, { type: 'text' | 'password'; [key: string]: unknown }>;
export type NodeConstructor = new (config: any) => unknown;

export interface NodeSetInfo {
  /** `<module>/<set>` */
  id: string;
  name: string;
  module: string;
  version: string;
  /** Types the set registered (or declared in its .html before it loaded). */
  types: string[];
  enabled: boolean;
  /** True once the set's code ran and registered its types. */
  loaded: boolean;
  err?: string;
}

/** A plugin as registered: the module's definition object, with Node-RED's `id`, `module` and `path` added. */
export type PluginDefinition = Record<string, unknown> & { id: string; type?: unknown; module: string };

/** A `node-red.plugins` entry of a module: its code registers plugins instead of node types. */
export interface PluginSetInfo extends NodeSetInfo {
  plugins: PluginDefinition[];
  /** The companion .html the editor loads, when there is one. */
  template?: string;
  /** Whether the set has runtime code (Node-RED's `runtime` flag). */
  runtime: boolean;
  /** Where its message catalogs are, `<dir>/<lang>/<base>.json`, beside its code or template (Node-RED's rule). */
  catalog?: { dir: string; base: string };
}

export interface ModuleInfo {
  name: string;
  version: string;
  /** Directory of an installed module; absent for the built-in nodes. */
  path?: string;
  builtin: boolean;
  sets: Map<string, NodeSetInfo>;
  plugins: Map<string, PluginSetInfo>;
}

/** A subflow shipped as a node type (`RED.nodes.registerSubflow`): Node-RED's exported subflow JSON. */
export interface SubflowDefinition {
  id: string;
  type: 'subflow';
  env?: { name: string; type?: string; value?: unknown }[];
  meta?: { type?: string; module?: string; version?: string };
  /** The subflow's nodes (`z` = its id), nested subflow templates and their nodes included. */
  flow: Record<string, unknown>[];
  [key: string]: unknown;
}

/**
 * What the runtime supplies so the registry never builds nodes itself: the runtime owns the node
 * model, the registry only records which constructor serves which type.
 */
export interface NodeClasses {
  /** Makes a registered constructor produce runtime nodes (Node-RED's util.inherits onto Node). */
  adopt(ctor: NodeConstructor): void;
  /** The constructor subflow module types are listed with; their instances start from the definition. */
  subflowModule: NodeConstructor;
}

interface TypeEntry {
  ctor: NodeConstructor;
  set: NodeSetInfo;
  credentials: CredentialDefinition | null;
  settings?: Record<string, unknown>;
  subflow?: SubflowDefinition;
}

/**
 * Node types, the node sets that provide them, and the modules that ship the sets.
 * Emits `type-registered` (type) and `types-removed` (types[]) so waiting flows can start, and
 * `type-replaced` (type) when a different implementation now serves a type that may be deployed.
 */
export class Registry extends EventEmitter {
  private readonly types = new Map<string, TypeEntry>();
  /** Built-in types an installed module replaced, restored when that module's types go. */
  private readonly shadowed = new Map<string, TypeEntry>();
  readonly modules = new Map<string, ModuleInfo>();

  private readonly plugins = new Map<string, PluginDefinition>();

  constructor(private readonly nodeClasses: NodeClasses) {
    super();
  }

  addModule(info: Omit<ModuleInfo, 'sets' | 'plugins'>): ModuleInfo {
    const existing = this.modules.get(info.name);
    if (existing) return Object.assign(existing, info);
    const mod: ModuleInfo = { ...info, sets: new Map(), plugins: new Map() };
    this.modules.set(info.name, mod);
    return mod;
  }

  addSet(moduleName: string, setName: string): NodeSetInfo {
    const mod = this.modules.get(moduleName);
    if (!mod) throw new Error(`unknown module ${moduleName}`);
    let set = mod.sets.get(setName);
    if (!set) {
      set = { id: `${moduleName}/${setName}`, name: setName, module: moduleName, version: mod.version, types: [], enabled: true, loaded: false };
      mod.sets.set(setName, set);
    }
    return set;
  }

  addPluginSet(moduleName: string, setName: string, file: Pick<PluginSetInfo, 'template' | 'runtime' | 'catalog'>): PluginSetInfo {
    const mod = this.modules.get(moduleName);
    if (!mod) throw new Error(`unknown module ${moduleName}`);
    const set: PluginSetInfo = {
      id: `${moduleName}/${setName}`, name: setName, module: moduleName, version: mod.version, types: [], enabled: true, loaded: false, plugins: [], ...file,
    };
    mod.plugins.set(setName, set);
    return set;
  }

  /**
   * RED.plugins.registerPlugin from a plugin set (Node-RED's registry: the definition itself is
   * kept and given `id`, `module` and `path`; `onadd` runs once it is registered).
   */
  registerPlugin(set: NodeSetInfo, id: string, definition: Record<string, unknown>): void {
    if (typeof id !== 'string' || id.length === 0) throw new Error('plugin id must be a non-empty string');
    if (definition === null || typeof definition !== 'object') throw new Error(`plugin ${id} needs a definition object`);
    if (this.plugins.has(id)) throw new Error(`${id} already registered`);
    const mod = this.modules.get(set.module);
    const plugin = Object.assign(definition, { id, module: set.module, path: mod?.path }) as PluginDefinition;
    this.plugins.set(id, plugin);
    mod?.plugins.get(set.name)?.plugins.push(plugin);
    if (typeof plugin.onadd === 'function') (plugin.onadd as () => void)();
    this.emit('plugin-added', id);
  }

  getPlugin(id: string): PluginDefinition | undefined {
    return this.plugins.get(id);
  }

  getPluginsByType(type: string): PluginDefinition[] {
    return [...this.plugins.values()].filter((p) => p.type === type);
  }

  allPluginSets(): PluginSetInfo[] {
    return [...this.modules.values()].flatMap((m) => [...m.plugins.values()]);
  }

  /** Forgets a module's plugins (removal or upgrade); `onremove` runs for each, as in Node-RED. */
  removePlugins(mod: ModuleInfo): void {
    for (const set of mod.plugins.values()) {
      for (const plugin of set.plugins) {
        this.plugins.delete(plugin.id);
        if (typeof plugin.onremove === 'function') {
          try {
            (plugin.onremove as () => void)();
          } catch {
            // The plugin is going away whatever its clean-up does.
          }
        }
      }
      set.plugins = [];
      set.loaded = false;
    }
  }

  /** Registers a node type for a set; the runtime's `adopt` makes the constructor build its nodes. */
  registerType(set: NodeSetInfo, type: string, ctor: NodeConstructor, opts: { credentials?: CredentialDefinition; settings?: Record<string, unknown> } = {}): void {
    if (typeof type !== 'string' || type.length === 0) throw new Error('node type must be a non-empty string');
    if (typeof ctor !== 'function') throw new Error(`constructor for ${type} must be a function`);
    const existing = this.types.get(type);
    const replacesBuiltin = existing !== undefined && this.isBuiltin(existing.set) && !this.isBuiltin(set);
    if (existing && existing.set !== set && !replacesBuiltin) {
      throw new RunnelError('type_already_registered', `${type} already registered`, { type, module: existing.set.module });
    }
    if (existing && !replacesBuiltin) throw new Error(`${type} already registered`);
    this.nodeClasses.adopt(ctor);
    if (existing && replacesBuiltin) {
      // An installed module may take over a built-in type (node-red-node-rbe ships `rbe`, which
      // Runnel also has); removing the module brings the built-in back.
      this.shadowed.set(type, existing);
      existing.set.types = existing.set.types.filter((t) => t !== type);
    }
    this.types.set(type, { ctor, set, credentials: opts.credentials ?? null, settings: opts.settings });
    if (!set.types.includes(type)) set.types.push(type);
    set.loaded = true;
    this.emit('type-registered', type);
    if (replacesBuiltin) this.emit('type-replaced', type);
  }

  /**
   * Registers a subflow module: its type is `meta.type` (else `sf:<id>`), its instances run the
   * subflow with env taken from their properties, and its `cred` env entries are the type's
   * password credentials. The runtime starts instances from the definition (getSubflowDefinition).
   */
  registerSubflow(set: NodeSetInfo, definition: unknown): string {
    const def = definition as SubflowDefinition | null;
    if (def === null || typeof def !== 'object' || def.type !== 'subflow' || typeof def.id !== 'string' || !Array.isArray(def.flow)) {
      throw new Error('registerSubflow needs a subflow definition: {type: "subflow", id, flow: [...]}');
    }
    const bad = def.flow.findIndex((n) => n === null || typeof n !== 'object' || typeof n.id !== 'string' || typeof n.type !== 'string');
    if (bad >= 0) throw new Error(`registerSubflow: flow[${bad}] is not a node with a string id and type`);
    if (def.env !== undefined && !Array.isArray(def.env)) throw new Error('registerSubflow: env must be an array');
    const type = typeof def.meta?.type === 'string' && def.meta.type ? def.meta.type : `sf:${def.id}`;
    const credentials: CredentialDefinition = {};
    for (const entry of Array.isArray(def.env) ? def.env : []) {
      if (entry?.type === 'cred' && typeof entry.name === 'string') credentials[entry.name] = { type: 'password' };
    }
    this.registerType(set, type, this.nodeClasses.subflowModule, { credentials });
    this.types.get(type)!.subflow = def;
    return type;
  }

  /** The definition behind a subflow module type whose set is enabled. */
  getSubflowDefinition(type: string): SubflowDefinition | undefined {
    const entry = this.types.get(type);
    return entry?.subflow && entry.set.enabled ? entry.subflow : undefined;
  }

  /** Whether a type is provided by a built-in set, which installed modules may replace. */
  isBuiltinType(type: string): boolean {
    const entry = this.types.get(type);
    return entry !== undefined && this.isBuiltin(entry.set);
  }

  private isBuiltin(set: NodeSetInfo): boolean {
    return this.modules.get(set.module)?.builtin === true;
  }

  /** The constructor for a type whose set is enabled, or undefined. */
  getConstructor(type: string): NodeConstructor | undefined {
    const entry = this.types.get(type);
    return entry && entry.set.enabled ? entry.ctor : undefined;
  }

  isKnownType = (type: string): boolean => {
    const entry = this.types.get(type);
    return entry !== undefined && entry.set.enabled;
  };

  /** undefined: type unknown (or disabled); null: registered without credentials. */
  getCredentialDefinition = (type: string): CredentialDefinition | null | undefined => {
    const entry = this.types.get(type);
    if (!entry) return undefined;
    return entry.credentials;
  };

  getTypeSet(type: string): NodeSetInfo | undefined {
    return this.types.get(type)?.set;
  }

  /** Forgets every type of a set (module removal or upgrade). */
  removeSetTypes(set: NodeSetInfo): string[] {
    const removed: string[] = [];
    const restored: string[] = [];
    for (const [type, entry] of this.types) {
      if (entry.set !== set) continue;
      this.types.delete(type);
      removed.push(type);
      const builtin = this.shadowed.get(type);
      if (builtin) {
        this.shadowed.delete(type);
        this.types.set(type, builtin);
        builtin.set.types.push(type);
        restored.push(type);
      }
    }
    set.loaded = false;
    if (removed.length) this.emit('types-removed', removed);
    for (const type of restored) {
      this.emit('type-registered', type);
      this.emit('type-replaced', type);
    }
    return removed;
  }

  setEnabled(set: NodeSetInfo, enabled: boolean): void {
    if (set.enabled === enabled) return;
    set.enabled = enabled;
    if (enabled) for (const type of set.types) this.emit('type-registered', type);
    else this.emit('types-removed', [...set.types]);
  }

  allSets(): NodeSetInfo[] {
    return [...this.modules.values()].flatMap((m) => [...m.sets.values()]);
  }
}
