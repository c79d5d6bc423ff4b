/** The longest queue name: it names a file on the file backend. */
const MAX_NAME = 100;

/** Why a queue name cannot be used, or undefined when it can. */
export function badQueueName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.trim() === '') return 'the queue has no name';
  if (name.length > MAX_NAME) return `the queue name is longer than ${MAX_NAME} characters`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the queue name contains a control character';
  return undefined;
}
