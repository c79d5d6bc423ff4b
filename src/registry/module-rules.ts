/**
 * Node-RED's allow and deny lists of module names (`externalModules.palette.allowList`/`denyList`,
 * `allowUpdateList`/`denyUpdateList`, `externalModules.modules.allowList`/`denyList`), read and
 * matched as @node-red/registry does, so a settings file refuses on Runnel what it refuses there.
 */
import type Semver from 'semver';
import { lazy } from '../base/lazy.js';

const semver = lazy<typeof Semver>('semver');

interface Rule {
  re: RegExp;
  range?: string;
  /** Where the first `*` is (Infinity without one): a later wildcard is a more specific rule. */
  wildcardPos: number;
  /** Node-RED breaks a tie by the length of its regular expression's text, where each `*` is `.*`. */
  length: number;
}

function parse(list: string[]): Rule[] {
  return list.map((entry) => {
    const m = /^(.+?)(?:@(.*))?$/.exec(entry);
    // Node-RED's pattern would fail on an empty rule; one that matches nothing is the quiet equivalent.
    if (!m) return { re: /$^/, wildcardPos: Infinity, length: 0 };
    const pattern = m[1];
    const stars = pattern.split('*');
    const re = new RegExp(`^${stars.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    const star = pattern.indexOf('*');
    return { re, range: m[2] || undefined, wildcardPos: star < 0 ? Infinity : star, length: pattern.length + stars.length - 1 };
  });
}

/** A rule with a range matches a version in it, or any version when none is known. */
function firstMatch(rules: Rule[], name: string, version: string | undefined): Rule | undefined {
  return rules.find((r) => r.re.test(name) && (!version || !r.range || semver().satisfies(version, r.range)));
}

export class ModuleRules {
  private readonly allow: Rule[];
  private readonly deny: Rule[];

  /**
   * Node-RED's reading of a pair of lists: neither given allows every module; once one is given,
   * the other one missing is `["*"]` — so an allowList alone allows only what it matches, and a
   * denyList alone refuses only what it matches. An empty list is a list: `allowList: ["x"],
   * denyList: []` allows everything.
   */
  constructor(allowList: string[] | undefined, denyList: string[] | undefined) {
    const given = allowList !== undefined || denyList !== undefined;
    this.allow = parse(given ? (allowList ?? ['*']) : ['*']);
    this.deny = parse(given ? (denyList ?? ['*']) : []);
  }

  /** Node-RED's shortcut: with an empty deny list nothing is checked at all. */
  get allowsAll(): boolean {
    return this.deny.length === 0;
  }

  /** Whether a rule names a version range (only then does the version of a module matter). */
  get versioned(): boolean {
    return [...this.allow, ...this.deny].some((r) => r.range !== undefined);
  }

  /**
   * Node-RED's checkModuleAllowed: a module matching one list follows it, one matching neither is
   * allowed, and when both match, the rule whose first `*` comes later wins, then the longer one —
   * `denyList: ["*"], allowList: ["lodash"]` allows lodash alone.
   */
  allows(name: string, version?: string): boolean {
    if (this.allow.length === 0 && this.deny.length === 0) return true;
    const allowed = firstMatch(this.allow, name, version);
    const denied = firstMatch(this.deny, name, version);
    if (!denied) return true;
    if (!allowed) return false;
    if (allowed.wildcardPos !== denied.wildcardPos) return allowed.wildcardPos > denied.wildcardPos;
    return allowed.length > denied.length;
  }
}
