import Module from 'node:module';

/**
 * Calls `listener` with the exports and file of every `socket.io` a node module requires. Node
 * modules create their socket.io servers themselves, from their own copy of socket.io, so the
 * only place Runnel sees that copy is its load. Node 20 has no public CommonJS load hook
 * (`module.registerHooks` came with 22.15), hence the wrapped `Module._load`, as APM agents do.
 */
type Load = (this: unknown, request: string, parent: unknown, isMain: boolean) => unknown;
interface ModuleInternals {
  _load: Load;
  _resolveFilename(request: string, parent: unknown, isMain: boolean): string;
}

const listeners = new Set<(exports: unknown, filename: string) => void>();

export function onSocketIoLoad(listener: (exports: unknown, filename: string) => void): void {
  if (listeners.size === 0) wrapLoad();
  listeners.add(listener);
}

function wrapLoad(): void {
  const internals = Module as unknown as ModuleInternals;
  const load = internals._load;
  internals._load = function (request, parent, isMain) {
    const exports = load.call(this, request, parent, isMain);
    if (request === 'socket.io') {
      const filename = internals._resolveFilename(request, parent, isMain);
      for (const listener of listeners) listener(exports, filename);
    }
    return exports;
  };
}
