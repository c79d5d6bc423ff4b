/**
 * A setting that cannot be used, with a one-line reason naming it: the start stops with that line.
 * Every settings parser throws this one class, so callers need no translation between parsers.
 */
export class SettingsError extends Error {}
