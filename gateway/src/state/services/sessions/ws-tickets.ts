// Single-use tickets that open the live-update WebSocket (`GET /ws?ticket=`): browsers cannot set headers on a
// WebSocket, so a page that holds a session (or a client with the admin key) trades it for a ticket that lives
// 30 seconds and is consumed by the first upgrade that shows it. Only the ticket's SHA-256 is a key.
import type { Coordinator, CoordScript } from '../../coord/types.ts';
import { sha256Hex } from '../../ids.ts';
import { randomToken, TOKEN_SHAPE } from './store.ts';

/** How long a ticket may wait for its upgrade. */
export const WS_TICKET_TTL_MS = 30_000;

/** Reads and deletes a key in one step, so two upgrades (on two pods) cannot both consume one ticket. */
export const TAKE_SCRIPT: CoordScript<string | null> = {
  name: 'take',
  lua: `local value = redis.call('GET', KEYS[1])
if value then
  redis.call('DEL', KEYS[1])
end
return value`,
  local: (store, keys) => {
    const key = keys[0];
    if (key === undefined) return null;
    const value = store.get(key);
    if (value !== null) store.del(key);
    return value;
  },
};

interface StoredTicket {
  /** Who asked for it: the name of the admin principal (an admin key's name, or `session:<user>`). */
  holder: string;
  /** Epoch ms. */
  expiresAt: number;
}

export class WsTicketStore {
  private readonly coord: Coordinator;
  private readonly ttlMs: number;
  constructor(coord: Coordinator, ttlMs = WS_TICKET_TTL_MS) {
    this.coord = coord;
    this.ttlMs = ttlMs;
  }

  private key(ticket: string): string {
    return `ws-ticket:${sha256Hex(ticket)}`;
  }

  /** A new ticket for `holder`; the ticket itself is returned once and never stored. */
  async issue(holder: string, now: number): Promise<{ ticket: string; expiresAt: number }> {
    const ticket = randomToken();
    const stored: StoredTicket = { holder, expiresAt: now + this.ttlMs };
    await this.coord.set(this.key(ticket), JSON.stringify(stored), this.ttlMs);
    return { ticket, expiresAt: stored.expiresAt };
  }

  /** The holder of a live ticket, which is consumed by this call; undefined when unknown, used or expired. */
  async consume(ticket: string, now: number): Promise<string | undefined> {
    if (!TOKEN_SHAPE.test(ticket)) return undefined;
    const raw = await this.coord.run(TAKE_SCRIPT, [this.key(ticket)], []);
    if (typeof raw !== 'string') return undefined;
    const stored = JSON.parse(raw) as StoredTicket;
    return stored.expiresAt > now ? stored.holder : undefined;
  }
}
