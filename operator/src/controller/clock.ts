// Time as the controller machinery sees it: injected so that tests drive backoff and delays without waiting.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms`; returns a function that cancels it (a no-op once it ran). */
  setTimeout(fn: () => void, ms: number): () => void;
}

/** Wall-clock time; timers are unref'd so a pending delayed add never keeps a process alive by itself. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
