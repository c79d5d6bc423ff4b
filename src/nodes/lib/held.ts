import type { DoneFn, Msg, SendFn } from '../../runtime/red-api/red-api-types.js';

/** A message a node keeps for later, with the send and done of the delivery that brought it. */
export interface Held {
  msg: Msg;
  send: SendFn;
  done: DoneFn;
}
