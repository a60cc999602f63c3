// Dashboard sessions in the coordinator (Redis across pods, with a TTL): an opaque random token maps to who logged
// in and the session's CSRF token. Only the token's SHA-256 is a key, so a look at Redis yields no usable cookie.
import { randomBytes } from 'node:crypto';
import type { Coordinator } from '../../coord/types.ts';
import { sha256Hex } from '../../ids.ts';

/** Who logged in: the admin API key (its configured name) or a Basic user of config.json. */
export type SessionUser = { kind: 'admin'; name: string } | { kind: 'basic'; username: string };

export interface Session {
  user: SessionUser;
  /** Sent back by the dashboard in a header on every call (synchronizer token). */
  csrf: string;
  /** Epoch ms. */
  createdAt: number;
  expiresAt: number;
}

/** A session lives 12 hours from login; logging in again starts a new one. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** The shape of a token `randomToken` makes: checked before any lookup. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** 256 random bits, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export class SessionStore {
  private readonly coord: Coordinator;
  private readonly ttlMs: number;
  constructor(coord: Coordinator, ttlMs = SESSION_TTL_MS) {
    this.coord = coord;
    this.ttlMs = ttlMs;
  }

  private key(token: string): string {
    return `session:${sha256Hex(token)}`;
  }

  /** A new session for `user`; the token goes only into the HttpOnly cookie. */
  async create(user: SessionUser, now: number): Promise<{ token: string; session: Session }> {
    const token = randomToken();
    const session: Session = { user, csrf: randomToken(), createdAt: now, expiresAt: now + this.ttlMs };
    await this.coord.set(this.key(token), JSON.stringify(session), this.ttlMs);
    return { token, session };
  }

  /** The live session of `token`; undefined when unknown, revoked or expired. */
  async get(token: string, now: number): Promise<Session | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined;
    const raw = await this.coord.get(this.key(token));
    if (raw === null) return undefined;
    const session = JSON.parse(raw) as Session;
    return session.expiresAt > now ? session : undefined;
  }

  async revoke(token: string): Promise<void> {
    if (TOKEN_SHAPE.test(token)) await this.coord.del(this.key(token));
  }
}
