import { hashSync } from '../../src/auth/bcrypt.js';

export const ADMIN_PASSWORD = 'admin-password-1';
export const READER_PASSWORD = 'reader-password-1';
// Cost 4 keeps the suite fast; production hashes use the cost the user chose.
export const adminHash = hashSync(ADMIN_PASSWORD, 4);
export const readerHash = hashSync(READER_PASSWORD, 4);

/** A users block with `admin` (*) and `reader` (read). */
export function adminAuth(extra: Record<string, unknown> = {}) {
  return {
    type: 'credentials',
    users: [
      { username: 'admin', password: adminHash, permissions: '*' },
      { username: 'reader', password: readerHash, permissions: 'read' },
    ],
    ...extra,
  };
}
