// Pending OAuth authorizations in the coordinator (Redis across pods): the `state` parameter of an authorization
// request maps to what the callback needs (the configuration, the binding, the PKCE verifier, the redirect_uri)
// until the authorization's expiry. Taking one is atomic (GET + DEL in one script), so a state is used once even
// when a browser, a proxy or an attacker replays the callback on two pods at the same time.
import { randomBytes } from 'node:crypto';
import type { TokenBinding } from '../../../mcp/types.ts';
import type { Coordinator, CoordScript } from '../../coord/types.ts';

export interface PendingAuthorization {
  configId: string;
  /** 'server' completes a server-level configuration; 'per_user' calls the per-user completion hook. */
  kind: 'server' | 'per_user';
  binding: TokenBinding;
  codeVerifier: string;
  redirectUri: string;
  /** Epoch ms after which the callback is refused. */
  expiresAt: number;
  /** Free data of the flow's owner (the per-user flow id, ...), returned to its completion hook. */
  extra?: Record<string, string> | undefined;
}

/** KEYS[1]: returns the value and deletes it, or nil. */
export const TAKE_SCRIPT: CoordScript<string | null> = {
  name: 'oauth_state_take',
  lua: `local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v`,
  local: (store, keys) => {
    const key = keys[0];
    if (key === undefined) return null;
    const v = store.get(key);
    if (v !== null) store.del(key);
    return v;
  },
};

/** 256 random bits, base64url: unguessable, and short enough for a query string. */
export function newStateValue(): string {
  return randomBytes(32).toString('base64url');
}

const STATE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

export class PendingAuthorizations {
  private readonly coord: Coordinator;
  constructor(coord: Coordinator) {
    this.coord = coord;
  }

  private key(state: string): string {
    return `mcp:oauth:state:${state}`;
  }

  async put(state: string, pending: PendingAuthorization, now: number): Promise<void> {
    const ttl = Math.max(1000, pending.expiresAt - now);
    const stored = await this.coord.setIfAbsent(this.key(state), JSON.stringify(pending), ttl);
    if (!stored) throw new Error('OAuth state collision');
  }

  /** The pending authorization of `state`, removed; undefined when unknown, already used or expired. */
  async take(state: string, now: number): Promise<PendingAuthorization | undefined> {
    if (!STATE_SHAPE.test(state)) return undefined;
    const raw = await this.coord.run(TAKE_SCRIPT, [this.key(state)], []);
    if (raw === null) return undefined;
    const pending = JSON.parse(raw) as PendingAuthorization;
    return pending.expiresAt > now ? pending : undefined;
  }
}
