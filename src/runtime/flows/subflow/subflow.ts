import type { LiveNode, RuntimeServices } from '../services.js';
import { Flow, problemReport, type NodeProblem } from '../flow.js';
import { FLOW, type Msg, type NodeConfig, type NodeStatus } from '../node.js';
import { subflowTemplateId, type ParsedConfig } from '../../config/config.js';
import type { FlowNodeConfig } from '../../../storage/contract.js';
import type { NodeErrorReport } from '../../config/deploy-types.js';
import { SubflowInstanceNode, SubflowStatusNode } from './nodes.js';
import { InstanceLayout, type InternalElement } from './template.js';
import { mergeSubflowEnv } from './env.js';
import { moduleInstanceEnv, subflowModule } from './module.js';
import { EnvScope, UNSET } from '../env/scope.js';

const PARENT_PREFIX = '$parent.';

/** What starting instances needs from the FlowSet that owns them. */
export interface InstanceHost {
  /** The configuration being started: where templates are found. */
  config: ParsedConfig;
  /** Internal nodes whose constructor failed, by id (the FlowSet's error report). */
  errors: Map<string, NodeErrorReport>;
  /** Ids of every live instance, nested ones included (their flow context must survive cleaning). */
  live: Set<string>;
}

/**
 * A running subflow instance: a Flow inside its parent's, holding copies of the template's nodes.
 * Its env is the template's, overridden per instance; errors and status that nothing inside takes
 * continue in the parent flow as if they came from the instance node.
 */
class SubflowFlow extends Flow {
  readonly instance: SubflowInstanceNode;
  private readonly envScope: EnvScope;
  private readonly hasStatusPort: boolean;
  private readonly instanceName: unknown;

  constructor(services: RuntimeServices, instance: SubflowInstanceNode, instanceConf: FlowNodeConfig, template: FlowNodeConfig, parent: Flow) {
    super(services, instance.id, template, parent);
    this.instance = instance;
    this.hasStatusPort = Boolean(template.status);
    this.instanceName = instanceConf.name;
    const outer = (name: string) => parent.settingFor(instance.g, name);
    const list = mergeSubflowEnv(template.env, instanceConf.env, {
      template: services.credentialsFor(template.id, template.type, outer) ?? {},
      instance: services.credentialsFor(instance._alias ?? instance.id, instance.type, outer) ?? {},
    });
    // `cred` entries already carry their values; JSONata ones are evaluated for the instance node.
    this.envScope = new EnvScope(list, () => ({
      ...this.envContext(instance.id, outer),
      warn: (text: string) => instance.warn(text),
    }));
  }

  protected override ownEnv(): EnvScope {
    return this.envScope;
  }

  override get path(): string {
    return `${this.parent!.path}/${this.instance._alias ?? this.instance.id}`;
  }

  /** The instance's env, then what the instance node itself sees: its group's env, then its flow's. */
  override getSetting(name: string): unknown {
    if (name.startsWith(PARENT_PREFIX)) return this.parent!.settingFor(this.instance.g, name.slice(PARENT_PREFIX.length));
    const value = this.envScope.lookup(name);
    if (value !== UNSET) return value;
    // The saved name, "" included (the instance node itself keeps only a truthy one).
    if (name === 'NR_SUBFLOW_NAME') return this.instanceName;
    if (name === 'NR_SUBFLOW_ID') return this.instance.id;
    if (name === 'NR_SUBFLOW_PATH') return this.path;
    return this.parent!.settingFor(this.instance.g, name);
  }

  override handleError(node: LiveNode, err: unknown, msg: Msg, reporting: LiveNode = node): boolean {
    return super.handleError(node, err, msg, reporting) || this.parent!.handleError(node, err, msg, this.instance);
  }

  override handleStatus(node: LiveNode, status: NodeStatus, reporting: LiveNode = node, mute = false): boolean {
    if (super.handleStatus(node, status, reporting, mute)) return true;
    // With a status port the user decides what the instance shows; internal status stays inside.
    return !this.hasStatusPort && this.parent!.handleStatus(node, status, this.instance, true);
  }
}

/**
 * Starts the instance `conf` (type `subflow:<id>`) in `parent`: its instance node, then the
 * template's config nodes, nodes and nested instances. Returns the error text when the instance
 * cannot start at all; failures of single internal nodes are reported in `host.errors`.
 */
export async function startSubflowInstance(parent: Flow, instanceConf: FlowNodeConfig, outerHost: InstanceHost, chain: string[] = []): Promise<string | undefined> {
  const services = parent.services;
  let conf = instanceConf;
  let host = outerHost;
  const templateId = subflowTemplateId(conf.type);
  let template = templateId === undefined ? undefined : host.config.subflows.get(templateId);
  const definition = templateId === undefined ? services.registry.getSubflowDefinition(conf.type) : undefined;
  if (definition) {
    // A subflow module: its own parsed definition holds the template and any nested ones.
    const module = subflowModule(definition, services.registry.isKnownType);
    template = module.template;
    host = { ...outerHost, config: module.config };
    conf = { ...conf, env: moduleInstanceEnv(definition, conf) };
  }
  if (!template) return `subflow template ${templateId ?? conf.type} not found`;
  if (chain.includes(template.id)) return `subflow ${template.id} contains an instance of itself`;
  const layout = new InstanceLayout(conf.id, template);
  const instance = new SubflowInstanceNode(instanceNodeConfig(conf, parent));
  const flow = new SubflowFlow(services, instance, conf, template.config, parent);
  // The instance's flow context must know its parent before any internal node asks for it.
  services.context.getFlowContext(conf.id, parent.contextId);
  flow.setGroups(template.groups);
  const preparing = flow.prepareEnv();
  if (preparing) await preparing;
  const internalConfigs = new Set<string>();
  const internalIds: string[] = [];
  /** Internal nodes whose constructor failed: their errors go when the instance does. */
  const failedIds: string[] = [];

  instance.inputTargets = layout.inputTargets;
  const attachPassthrough = () => {
    instance.passthroughTargets = layout.passthroughOutputs.flatMap((o) => instance.wires[o] ?? []);
  };
  attachPassthrough();
  const attached = layout.attached;
  instance.onRewire = () => {
    attachPassthrough();
    for (const element of attached) services.nodes.get(element.config.id)?.updateWires(layout.wiresFor(element, instance.wires));
  };
  instance.on('close', (removed: boolean, done: () => void) => {
    void stopInternals(flow, internalIds, internalConfigs, removed).then(() => {
      for (const id of internalIds) host.errors.delete(id);
      for (const id of failedIds) host.errors.delete(id);
      host.live.delete(conf.id);
      done();
    });
  });
  parent.adopt(instance);
  host.live.add(conf.id);

  if (layout.statusId) {
    const status = new SubflowStatusNode({ id: layout.statusId, type: 'subflow-status', z: conf.id, [FLOW]: flow }, instance);
    flow.adopt(status);
    internalIds.push(status.id);
  }
  const record = (config: FlowNodeConfig, outcome: NodeProblem | string | undefined) => {
    const problem = typeof outcome === 'string' ? { error: outcome, live: false } : outcome;
    if (problem !== undefined) host.errors.set(config.id, problemReport(config, problem.error, conf.id));
    if (problem === undefined || problem.live) {
      internalIds.push(config.id);
      return;
    }
    failedIds.push(config.id);
    services.log.error({ node: { id: config.id, type: config.type, z: conf.id } }, `Failed to start node: ${problem.error}`);
  };
  const configFor = (element: InternalElement) => ({ ...element.config, wires: layout.wiresFor(element, instance.wires) });
  for (const element of orderConfigs(layout.configs)) {
    const config = configFor(element);
    record(config, flow.createNode(config));
    internalConfigs.add(config.id);
  }
  for (const element of layout.nodes) {
    const config = configFor(element);
    const isModule = services.registry.getSubflowDefinition(config.type) !== undefined;
    record(config, isModule ? await startSubflowInstance(flow, config, host, [...chain, template.id]) : flow.createNode(config));
  }
  for (const element of layout.instances) {
    const config = configFor(element);
    record(config, await startSubflowInstance(flow, config, host, [...chain, template.id]));
  }
  return undefined;
}

function instanceNodeConfig(conf: FlowNodeConfig, parent: Flow): NodeConfig {
  const config: NodeConfig = { id: conf.id, type: conf.type, wires: conf.wires as string[][], [FLOW]: parent };
  for (const key of ['z', 'g', 'name', '_alias'] as const) if (typeof conf[key] === 'string') config[key] = conf[key];
  return config;
}

/** Regular nodes close before the config nodes they may still be using, as in FlowSet. */
async function stopInternals(flow: Flow, ids: string[], configs: Set<string>, removed: boolean): Promise<void> {
  const regular = ids.filter((id) => !configs.has(id));
  const configNodes = ids.filter((id) => configs.has(id));
  for (const batch of [regular, configNodes]) await Promise.all(batch.map((id) => flow.stopNode(id, removed)));
  // The editor clears the status of every node inside a stopped instance (stopNode did for removed ones).
  if (!removed) for (const id of ids) flow.services.events.emit('node-status', { id, status: {} });
}

/** Config nodes in dependency order, so one can getNode() another it references. */
function orderConfigs(configs: InternalElement[]): InternalElement[] {
  const byId = new Map(configs.map((e) => [e.config.id, e]));
  const ordered: InternalElement[] = [];
  const seen = new Set<string>();
  const visit = (element: InternalElement) => {
    if (seen.has(element.config.id)) return;
    seen.add(element.config.id);
    for (const [key, value] of Object.entries(element.config)) {
      if (key === 'id' || key === 'z' || typeof value !== 'string') continue;
      const dep = byId.get(value);
      if (dep) visit(dep);
    }
    ordered.push(element);
  };
  configs.forEach(visit);
  return ordered;
}
