import type { FlowNodeConfig } from '../../../storage/contract.js';
import type { ContainerInfo } from '../../config/config.js';

/** One template port connection: output `port` of the template element `alias`. */
interface PortLink {
  alias: string;
  port: number;
}

/** A template element copied for one instance, with its wires before any output is attached. */
export interface InternalElement {
  alias: string;
  config: FlowNodeConfig;
  baseWires: string[][];
}

/** Scopes of these types name template ids and are matched against `_alias` (see Flow). */
const SCOPED_TYPES = new Set(['catch', 'status', 'complete']);

/**
 * A subflow template laid out for one instance: every internal element gets the id
 * `<instanceId>-<templateId>` (stable, so repeated deploys are deterministic), `_alias` = its
 * template id and `z` = the instance id, and every wire or property naming another internal
 * element is rewritten to the new id. It also answers how the instance's outputs and status port
 * attach to the internal elements.
 */
export class InstanceLayout {
  readonly configs: InternalElement[] = [];
  readonly nodes: InternalElement[] = [];
  readonly instances: InternalElement[] = [];
  readonly statusId: string | undefined;
  /** Internal ids wired to the template's input (and the status node when the input feeds it). */
  readonly inputTargets: string[] = [];
  /** Instance outputs the template's input is wired straight to. */
  readonly passthroughOutputs: number[] = [];
  private readonly outputs: PortLink[][];
  private readonly statusLinks: PortLink[];
  private readonly byAlias = new Map<string, InternalElement>();
  private readonly ids = new Map<string, string>();

  constructor(readonly instanceId: string, readonly template: ContainerInfo) {
    const def = template.config;
    for (const group of [template.configs, template.nodes, template.subflowInstances]) {
      for (const alias of group.keys()) this.ids.set(alias, `${instanceId}-${alias}`);
    }
    this.statusId = def.status ? `${instanceId}:status` : undefined;
    for (const [list, group] of [[this.configs, template.configs], [this.nodes, template.nodes], [this.instances, template.subflowInstances]] as const) {
      for (const conf of group.values()) {
        if (conf.d === true) continue;
        const element = this.copy(conf);
        list.push(element);
        this.byAlias.set(element.alias, element);
      }
    }
    this.outputs = ports(def.out).map((port) => links(port));
    this.statusLinks = def.status ? links(def.status) : [];
    for (const link of links(ports(def.in)[0])) {
      const id = this.ids.get(link.alias);
      if (id) this.inputTargets.push(id);
    }
    this.outputs.forEach((list, output) => {
      if (list.some((l) => l.alias === template.id)) this.passthroughOutputs.push(output);
    });
    if (this.statusId && this.statusLinks.some((l) => l.alias === template.id)) this.inputTargets.push(this.statusId);
  }

  /** Internal elements whose wires depend on the instance's own wires. */
  get attached(): InternalElement[] {
    const aliases = new Set<string>();
    for (const list of [...this.outputs, this.statusLinks]) for (const l of list) aliases.add(l.alias);
    return [...aliases].map((a) => this.byAlias.get(a)).filter((e): e is InternalElement => e !== undefined);
  }

  /** The element's wires with the instance outputs (`instanceWires`) and the status port attached. */
  wiresFor(element: InternalElement, instanceWires: string[][]): string[][] {
    const wires = element.baseWires.map((port) => port.slice());
    const attach = (port: number, targets: string[]) => {
      while (wires.length <= port) wires.push([]);
      wires[port].push(...targets);
    };
    this.outputs.forEach((list, output) => {
      for (const l of list) if (l.alias === element.alias) attach(l.port, instanceWires[output] ?? []);
    });
    if (this.statusId) for (const l of this.statusLinks) if (l.alias === element.alias) attach(l.port, [this.statusId]);
    return wires;
  }

  private copy(conf: FlowNodeConfig): InternalElement {
    const copy: FlowNodeConfig = { ...conf, id: this.ids.get(conf.id)!, z: this.instanceId, _alias: conf.id };
    const scoped = SCOPED_TYPES.has(conf.type);
    for (const [key, value] of Object.entries(conf)) {
      if (key === 'id' || key === 'z' || key === 'wires' || key === 'type' || (scoped && key === 'scope')) continue;
      if (typeof value === 'string') {
        const mapped = this.ids.get(value);
        if (mapped) copy[key] = mapped;
      } else if (Array.isArray(value) && value.some((v) => typeof v === 'string' && this.ids.has(v))) {
        // Link nodes name their peers in arrays (`links`); Node-RED only remaps one-element ones by accident.
        copy[key] = value.map((v) => (typeof v === 'string' ? (this.ids.get(v) ?? v) : v));
      }
    }
    const baseWires = Array.isArray(conf.wires)
      ? (conf.wires as unknown[]).map((port) =>
          Array.isArray(port) ? port.flatMap((t) => (typeof t === 'string' && this.ids.has(t) ? [this.ids.get(t)!] : [])) : [],
        )
      : [];
    copy.wires = baseWires;
    return { alias: conf.id, config: copy, baseWires };
  }
}

function ports(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function links(port: unknown): PortLink[] {
  const wires = (port as { wires?: unknown } | null)?.wires;
  if (!Array.isArray(wires)) return [];
  const result: PortLink[] = [];
  for (const w of wires) {
    if (w === null || typeof w !== 'object' || typeof (w as { id?: unknown }).id !== 'string') continue;
    const port = Number((w as { port?: unknown }).port ?? 0);
    result.push({ alias: (w as { id: string }).id, port: Number.isInteger(port) && port >= 0 ? port : 0 });
  }
  return result;
}
