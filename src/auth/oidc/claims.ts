/**
 * The permissions a user's groups give: those of every listed group they are in, none for a user
 * in no listed group. The claim is a list of names, or one name.
 */
export function permissionsOf(claim: unknown, byGroup: Readonly<Record<string, string | string[]>>): string[] {
  const groups = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
  const granted = new Set<string>();
  for (const group of groups) {
    if (!Object.hasOwn(byGroup, group)) continue;
    const p = byGroup[group]!;
    for (const permission of typeof p === 'string' ? [p] : p) granted.add(permission);
  }
  return [...granted];
}
