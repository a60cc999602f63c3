// The sessions of one per_user_oauth client, one per caller binding: opened on first use (concurrent first
// calls share the opening), at most `max` (the least recently used is closed beyond it), and closed by `sweep`
// once idle. Opening itself (and what it means for the client's tools and state) is the manager's.
import type { TokenBinding } from '../types.ts';
import type { UpstreamSession } from './session.ts';

interface Slot {
  ready: Promise<UpstreamSession>;
  session?: UpstreamSession | undefined;
  lastUsed: number;
}

export function bindingKey(b: TokenBinding): string {
  return b.kind === 'server' ? 'server' : `${b.kind}:${b.id}`;
}

export class SessionPool {
  private readonly slots = new Map<string, Slot>();
  private readonly max: number;
  private readonly open: (binding: TokenBinding, stillWanted: () => boolean) => Promise<UpstreamSession>;

  /** `open` opens a binding's session; it should give up (close, throw) when `stillWanted()` turns false. */
  constructor(max: number, open: (binding: TokenBinding, stillWanted: () => boolean) => Promise<UpstreamSession>) {
    this.max = max;
    this.open = open;
  }

  get size(): number {
    return this.slots.size;
  }

  /** The binding's session, opened if needed; rejects with the opening's error (and forgets the attempt). */
  get(binding: TokenBinding, now: number): Promise<UpstreamSession> {
    const key = bindingKey(binding);
    const found = this.slots.get(key);
    if (found) {
      found.lastUsed = now;
      return found.ready;
    }
    if (this.slots.size >= this.max) {
      const oldest = [...this.slots.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (oldest) {
        this.slots.delete(oldest[0]);
        void oldest[1].session?.close();
      }
    }
    // `slot` is read only by the callbacks, after it is assigned below.
    let slot: Slot;
    const ready = this.open(binding, () => this.slots.get(key) === slot).then(
      (session) => {
        slot.session = session;
        return session;
      },
      (err: unknown) => {
        if (this.slots.get(key) === slot) this.slots.delete(key);
        throw err;
      },
    );
    slot = { lastUsed: now, ready };
    this.slots.set(key, slot);
    return slot.ready;
  }

  /** Forgets and closes `session` (a lost one); the binding's next call opens a new one. */
  drop(binding: TokenBinding, session: UpstreamSession): void {
    const key = bindingKey(binding);
    if (this.slots.get(key)?.session === session) this.slots.delete(key);
    void session.close();
  }

  /** Closes the sessions unused since `cutoff`; returns how many slots remain. */
  sweep(cutoff: number): number {
    for (const [key, slot] of this.slots) {
      if (slot.session && slot.lastUsed < cutoff) {
        this.slots.delete(key);
        void slot.session.close();
      }
    }
    return this.slots.size;
  }

  /** Forgets every slot and returns the open sessions, for the caller to close. */
  clear(): UpstreamSession[] {
    const open = [...this.slots.values()].flatMap((s) => (s.session ? [s.session] : []));
    this.slots.clear();
    return open;
  }
}
