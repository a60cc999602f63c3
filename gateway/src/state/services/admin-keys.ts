// Admin API keys for /api/*: stored only as SHA-256 hashes. With no key configured anywhere, one is
// generated on first start, printed once, and stored hashed.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/types.ts';
import { newId, sha256Hex } from '../ids.ts';

export interface BootstrapResult {
  /** The generated key, to print once; undefined when a key already existed or was configured. */
  generated: string | undefined;
}

export async function bootstrapAdminKey(db: Db, configuredElsewhere: boolean): Promise<BootstrapResult> {
  if (configuredElsewhere) return { generated: undefined };
  return db.transaction(async (tx) => {
    // Serialises pods starting together so exactly one generates the key.
    await tx.query('SELECT pg_advisory_xact_lock(727274)');
    const { rowCount } = await tx.query('SELECT 1 FROM admin_api_keys LIMIT 1');
    if (rowCount > 0) return { generated: undefined };
    const key = `gw-admin-${randomBytes(24).toString('base64url')}`;
    await tx.query(
      `INSERT INTO admin_api_keys (id, name, key_hash, source) VALUES ($1, 'bootstrap', $2, 'bootstrap')`,
      [newId(), sha256Hex(key)],
    );
    return { generated: key };
  });
}

export async function readAdminKeyHashes(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ key_hash: string }>('SELECT key_hash FROM admin_api_keys');
  return rows.map((r) => r.key_hash);
}
