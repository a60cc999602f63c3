// The in-process coordinator of the embedded default (one gateway process): the same contract as Redis.
// The store is synchronous, so a script's local implementation runs atomically.

import { messageOf } from '../../util/errors.ts';
import { CoordError, ttlArg } from './errors.ts';
import { MemoryStreamStore, memoryStreams } from './memory-streams.ts';
import { INCR_SCRIPT, incrArgs, toScriptReply } from './scripts.ts';
import { MemoryStore } from './store.ts';
import type { Coordinator, CoordScript, Unsubscribe } from './types.ts';

type Handler = (message: string) => void;

/** Store and pub/sub shared by the coordinators of one process (tests share one between coordinators). */
export class MemoryBackend {
  readonly store: MemoryStore;
  readonly streams: MemoryStreamStore;
  readonly channels = new Map<string, Set<Handler>>();

  constructor(clock?: () => number) {
    this.store = new MemoryStore(clock);
    this.streams = new MemoryStreamStore(clock);
  }
}

export interface MemoryCoordinatorOptions {
  keyPrefix?: string;
  backend?: MemoryBackend;
  /** Receives errors thrown by subscription handlers (they must not break delivery to the others). */
  onError?: (error: unknown) => void;
  /** How often expired keys are dropped (reads ignore them regardless). */
  sweepIntervalMs?: number;
}

export function createMemoryCoordinator(options: MemoryCoordinatorOptions = {}): Coordinator {
  const backend = options.backend ?? new MemoryBackend();
  const { store, channels } = backend;
  const prefix = options.keyPrefix ?? '';
  const onError = options.onError ?? (() => undefined);
  const own = new Set<{ channel: string; handler: Handler }>();
  let closed = false;
  const sweeper = setInterval(() => store.sweep(), options.sweepIntervalMs ?? 30_000);
  sweeper.unref();

  // Errors surface as rejected promises, as they do over the network.
  const op = <T>(fn: () => T): Promise<T> => {
    if (closed) return Promise.reject(new CoordError('closed', 'the coordinator is closed'));
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const run = <R>(script: CoordScript<R>, keys: readonly string[], args: readonly (string | number)[]): Promise<R> =>
    op(() => {
      let reply: unknown;
      try {
        reply = script.local(
          store,
          keys.map((key) => prefix + key),
          args.map((arg) => String(arg)),
        );
      } catch (error) {
        const reason = messageOf(error);
        throw new CoordError('script_failed', `script ${script.name} failed: ${reason}`, { cause: error });
      }
      // The local implementation is written to return R; normalised as Redis would convert the Lua reply.
      return toScriptReply(reply) as R;
    });

  return {
    kind: 'memory',
    get: (key) => op(() => store.get(prefix + key)),
    set: (key, value, ttlMs) =>
      op(() => store.set(prefix + key, value, ttlMs === undefined ? undefined : ttlArg(ttlMs))),
    setIfAbsent: (key, value, ttlMs) =>
      op(() => {
        const ttl = ttlMs === undefined ? undefined : ttlArg(ttlMs);
        if (store.pttl(prefix + key) !== -2) return false;
        store.set(prefix + key, value, ttl);
        return true;
      }),
    del: (key) =>
      op(() => {
        store.del(prefix + key);
      }),
    incr: async (key, by, ttlMs) => Number(await run(INCR_SCRIPT, [key], incrArgs(by, ttlArg(ttlMs)))),
    run,
    streams: memoryStreams(backend.streams, prefix, () => closed),
    publish: (channel, message) =>
      op(() => {
        const handlers = channels.get(prefix + channel);
        if (handlers === undefined) return;
        // Delivered asynchronously like Redis pub/sub, to the handlers subscribed at publish time.
        for (const handler of [...handlers]) {
          queueMicrotask(() => {
            try {
              handler(message);
            } catch (error) {
              onError(error);
            }
          });
        }
      }),
    subscribe: (channel, onMessage) =>
      op(() => {
        const name = prefix + channel;
        // A wrapper per subscription, so subscribing one function twice yields two independent subscriptions.
        const handler: Handler = (message) => onMessage(message);
        const subscription = { channel: name, handler };
        let handlers = channels.get(name);
        if (handlers === undefined) {
          handlers = new Set();
          channels.set(name, handlers);
        }
        handlers.add(handler);
        own.add(subscription);
        const unsubscribe: Unsubscribe = async () => {
          own.delete(subscription);
          const current = channels.get(name);
          current?.delete(handler);
          if (current?.size === 0) channels.delete(name);
        };
        return unsubscribe;
      }),
    // One process: there is no connection to lose.
    onReconnect: () => undefined,
    healthy: async () => !closed,
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      for (const { channel, handler } of own) {
        const handlers = channels.get(channel);
        handlers?.delete(handler);
        if (handlers?.size === 0) channels.delete(channel);
      }
      own.clear();
    },
  };
}
