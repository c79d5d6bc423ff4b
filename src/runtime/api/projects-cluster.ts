import type { Runtime } from '../runtime.js';
import type { Projects, FlowPaths } from '../../projects/projects.js';
import { SharedRepos } from '../../projects/cluster/shared-repos.js';
import { readFlowFiles, writeFlowFiles, type RunningFlows } from '../../projects/cluster/flow-files.js';
import type { SharedStorage } from '../../storage/contract.js';
import type { Caller } from './caller.js';

/**
 * Projects with shared storage (README "Projects on a cluster", docs/cluster.md): every operation
 * runs on clones brought to the stored repositories, with the running flows written into the
 * active project's files first; what it changed is saved to the database, and only then are the
 * flows it asked for deployed, as any deploy is, so every instance runs them.
 */
export interface ClusterProjects {
  /** Runs one Projects operation as described above. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Deploys a project's files once the operation under way is saved (a switch, pull, checkout or revert). */
  deployAfter(paths: FlowPaths, clearContext: boolean, caller: Caller, then: () => void): void;
  /** Writes the running flows into the active project's files, where git sees them. */
  writeFiles(): Promise<void>;
}

export function clusterProjects(runtime: Runtime, projects: Projects, shared: SharedStorage, running: () => RunningFlows): ClusterProjects {
  const repos = new SharedRepos(projects, shared.projects, runtime.log.child({ module: 'projects' }));
  let deploy: (() => Promise<void>) | undefined;
  shared.onChange((change) => {
    if (change.kind === 'projects' || change.kind === 'resync') repos.follow();
  });
  const writeFiles = async () => {
    const paths = await projects.flowPaths();
    // The files must hold the deployed flows: an instance that has not applied the last deploy yet
    // would write older ones, and git would see them as a change nobody made (or stage them).
    await runtime.catchUp();
    if (paths !== undefined) await writeFlowFiles(paths, running(), projects.activeSecret());
  };
  return {
    run: (task) => repos.run(async () => {
      deploy = undefined;
      await writeFiles();
      return task();
    }, async () => {
      const pending = deploy;
      deploy = undefined;
      await pending?.();
    }),
    deployAfter: (paths, clearContext, caller, then) => {
      deploy = async () => {
        const { flows, credentials } = await readFlowFiles(paths, projects.activeSecret());
        if (clearContext) await runtime.context.clearAll();
        await runtime.deploy({ flows, credentials, type: 'full', user: caller.user, ip: caller.ip, reqId: caller.reqId });
        then();
      };
    },
    writeFiles,
  };
}
