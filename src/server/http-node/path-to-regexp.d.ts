// path-to-regexp 0.1.x (Express 4's dialect) ships no types.
declare module 'path-to-regexp' {
  function pathToRegexp(
    path: string | RegExp | (string | RegExp)[],
    keys?: { name: string | number; optional?: boolean; offset?: number }[],
    options?: { sensitive?: boolean; strict?: boolean; end?: boolean },
  ): RegExp;
  export = pathToRegexp;
}
