/**
 * Who asked for an admin operation, for the audit log and the revision it creates: the user (absent
 * without adminAuth), the client's address and the request's id.
 */
export interface Caller {
  user?: string;
  ip?: string;
  reqId?: string;
}
