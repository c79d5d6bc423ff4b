/** A stack frame of the code's own (anonymous) body function ends in `:line:col`. */
const FRAME_POSITION = /:(\d+):(\d+)$/;

/**
 * The text a function node hands to `done` when its code throws, as Node-RED builds it (catch
 * nodes see it as msg.error.message): a ReferenceError raised directly in the code's body gets
 * its position ("(line 2, col 5)", lines counted in the user's code); other errors read as
 * `Name: message`; a thrown string is kept; anything else is JSON.
 */
export function errorText(err: unknown): string {
  if (typeof err === 'object' && err !== null && Object.hasOwn(err, 'stack')) {
    const stack = String((err as { stack: unknown }).stack).split(/\r?\n/);
    const at = stack.findIndex((line) => line.startsWith('ReferenceError'));
    if (at >= 0) {
      const m = FRAME_POSITION.exec(stack[at + 1] ?? '');
      // The body starts on the second line of the compiled text, as in Node-RED.
      return m ? `${stack[at]} (line ${Number(m[1]) - 1}, col ${m[2]})` : stack[at];
    }
    return String(err);
  }
  if (typeof err === 'string') return err;
  return String(JSON.stringify(err));
}
