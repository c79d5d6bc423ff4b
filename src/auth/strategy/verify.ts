type Done = (err: unknown, user?: unknown, info?: unknown) => void;
type Verify = (...args: unknown[]) => unknown;

/**
 * Node-RED's verify wrapper: the strategy calls it with whatever arguments it chose, the settings'
 * `options.verify` (if any) turns them into a profile, and `complete` decides who that profile is
 * (or `false`, which the strategy turns into a failed login). The wrapper keeps `verify`'s
 * `length`: strategies such as passport-openidconnect choose their arguments by it.
 */
export function wrapVerify(verify: Verify | undefined, complete: (profile: unknown) => Promise<unknown>): Verify {
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    const done = args[args.length - 1] as Done;
    const finish = (profile: unknown) => {
      complete(profile).then(
        (user) => done(null, user),
        (err: unknown) => done(err),
      );
    };
    if (!verify) return finish(args[args.length - 2]);
    args[args.length - 1] = (err: unknown, profile?: unknown) => (err ? done(err) : finish(profile));
    return verify.apply(this, args);
  };
  if (verify) Object.defineProperty(wrapped, 'length', { value: verify.length });
  return wrapped;
}
