/**
 * Node-RED drops the nodes a status or complete node is wired to from its scope, so a directly
 * connected node cannot loop. Its walk steps past the entry after each one it removes; kept so the
 * same configurations watch the same nodes.
 */
export function withoutWired(scope: string[], wires: string[][]): string[] {
  const wired = new Set(wires.flat());
  const kept = [...scope];
  for (let i = 0; i < kept.length; i++) {
    if (wired.has(kept[i])) kept.splice(i, 1);
  }
  return kept;
}
