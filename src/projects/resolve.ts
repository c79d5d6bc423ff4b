import { RunnelError } from '../base/errors.js';

/**
 * A conflicted file resolved as the editor sends it: either the whole resolved text (the flows
 * file, merged node by node in the editor), or, for other files, a choice per conflict block,
 * keyed by the 1-based line of its `<<<<<<<` marker: `selection` A keeps our side (up to the
 * `separator` line), B theirs (up to the `changeEnd` line).
 */

interface Block {
  selection: 'A' | 'B';
  separator: number;
  changeEnd: number;
}

export function resolvedText(current: string, resolutions: unknown): string {
  if (typeof resolutions === 'string') return resolutions;
  if (typeof resolutions !== 'object' || resolutions === null || Array.isArray(resolutions)) {
    throw new RunnelError('invalid_request', 'resolutions is the resolved text, or a choice per conflict by line');
  }
  const blocks = new Map<number, Block>();
  for (const [line, value] of Object.entries(resolutions)) {
    const b = value as Partial<Block>;
    if (!/^\d+$/.test(line) || (b.selection !== 'A' && b.selection !== 'B') || !Number.isInteger(b.separator) || !Number.isInteger(b.changeEnd)) {
      throw new RunnelError('invalid_request', `The resolution at line ${line} needs selection A or B, separator and changeEnd lines`);
    }
    blocks.set(Number(line), b as Block);
  }
  const out: string[] = [];
  let block: Block | undefined;
  let keep = true;
  current.split('\n').forEach((text, index) => {
    const line = index + 1;
    const starts = blocks.get(line);
    if (starts) {
      block = starts;
      keep = starts.selection === 'A';
    } else if (block && line === block.separator) {
      keep = block.selection === 'B';
    } else if (block && line === block.changeEnd) {
      block = undefined;
      keep = true;
    } else if (keep) {
      out.push(text);
    }
  });
  return out.join('\n');
}
