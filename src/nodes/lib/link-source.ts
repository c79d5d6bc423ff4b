import type { Msg } from '../../runtime/red-api/red-api-types.js';

/** One hop of a link call, kept on the message so a return-mode link out can find the caller. */
export interface LinkSource {
  id: string;
  node: string;
}

/** A node a return-mode link out answers: a link call node, or a function node that called node.linkcall(). */
export interface LinkCaller {
  returnLinkMessage(id: string, msg: Msg): void;
}

/** Records the hop on the message, under any hops of calls it is already inside. */
export function pushLinkSource(msg: Msg, source: LinkSource): void {
  const stack: LinkSource[] = Array.isArray(msg._linkSource) ? msg._linkSource : (msg._linkSource = []);
  stack.push(source);
}

/** A message back from its last hop carries no empty call stack. */
export function dropEmptyLinkSource(msg: Msg): void {
  if (Array.isArray(msg._linkSource) && msg._linkSource.length === 0) delete msg._linkSource;
}
