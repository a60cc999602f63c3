// Short coordinator locks for MCP OAuth work that one pod at a time must do (registering a client, spending a
// rotating refresh token): SET NX with a TTL, released only by its holder (compare-and-delete in one script, so a
// holder whose lock expired never deletes the next holder's).
import { randomUUID } from 'node:crypto';
import type { Coordinator, CoordScript } from '../../coord/types.ts';

/** KEYS[1] lock, ARGV[1] holder token: deletes the key only if it still holds the token. */
export const RELEASE_SCRIPT: CoordScript<number> = {
  name: 'oauth_lock_release',
  lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  local: (store, keys, args) => {
    const key = keys[0];
    if (key === undefined || store.get(key) !== args[0]) return 0;
    return store.del(key) ? 1 : 0;
  },
};

export class CoordLocks {
  private readonly coord: Coordinator;
  private readonly ttlMs: number;
  constructor(coord: Coordinator, ttlMs = 30_000) {
    this.coord = coord;
    this.ttlMs = ttlMs;
  }

  /** Runs `fn` holding `key`; waits (polling) up to `waitMs` for another holder to finish. */
  async with<T>(key: string, fn: () => Promise<T>, waitMs = 20_000): Promise<T> {
    const token = randomUUID();
    const deadline = Date.now() + waitMs;
    while (!(await this.coord.setIfAbsent(key, token, this.ttlMs))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for another gateway pod (${key})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      return await fn();
    } finally {
      await this.coord.run(RELEASE_SCRIPT, [key], [token]);
    }
  }
}
