// Script calls on the Redis command connection, batched adaptively: a call is written at the end of the current
// tick when nothing is in flight; calls made while a batch is in flight wait for it and then leave together in
// one socket write,
// the calls of one script merged into one EVALSHA of its batch form (scripts.ts, `batchLua`). At low load a
// call pays no wait; under load the gateway writes, and Redis reads, parses and dispatches, one command per
// batch instead of one per call (docs/benchmarks.md, session 8).
// Calls issued without awaiting one another carry no order: calls of one script keep their order in a batch.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { messageOf } from '../../util/errors.ts';
import { CoordError } from './errors.ts';
import { batchLua } from './scripts.ts';
import type { CoordScript } from './types.ts';

/** Errors Redis replied with (vs. connection errors raised by the client). */
export function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

export function toCoordError(error: unknown): CoordError {
  if (error instanceof CoordError) return error;
  const message = messageOf(error);
  if (!isReplyError(error)) return new CoordError('unavailable', `redis unavailable: ${message}`, { cause: error });
  if (message.startsWith('WRONGTYPE')) return new CoordError('wrong_type', message, { cause: error });
  if (/not an integer|not a valid float/.test(message))
    return new CoordError('not_a_number', message, { cause: error });
  return new CoordError('command_failed', message, { cause: error });
}

function scriptError(script: CoordScript<unknown>, error: unknown): CoordError {
  if (!isReplyError(error)) return toCoordError(error);
  return new CoordError('script_failed', `script ${script.name} failed: ${error.message}`, { cause: error });
}

interface Compiled {
  lua: string;
  sha: string;
}

function compile(lua: string): Compiled {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

const singles = new WeakMap<CoordScript<unknown>, Compiled>();
const batches = new WeakMap<CoordScript<unknown>, Compiled>();

function compiled(
  cache: WeakMap<CoordScript<unknown>, Compiled>,
  script: CoordScript<unknown>,
  lua: () => string,
): Compiled {
  let entry = cache.get(script);
  if (entry === undefined) {
    entry = compile(lua());
    cache.set(script, entry);
  }
  return entry;
}

const single = (script: CoordScript<unknown>): Compiled => compiled(singles, script, () => script.lua);
const batch = (script: CoordScript<unknown>): Compiled => compiled(batches, script, () => batchLua(script.lua));

interface Call {
  script: CoordScript<unknown>;
  /** Prefixed keys. */
  keys: string[];
  args: string[];
  enqueuedAt: number;
  resolve: (reply: unknown) => void;
  reject: (error: CoordError) => void;
  done: boolean;
}

export interface ScriptBatcherOptions {
  /** A call fails with `unavailable` once it waited this long in all (queue and Redis). */
  timeoutMs: number;
  /** Most calls of one script in one EVALSHA (a larger queue is split). Default 256. */
  maxCallsPerCommand?: number;
  /** Batches written before the next waits for one of them to be answered. Default 2. */
  maxInFlight?: number;
}

export class ScriptBatcher {
  readonly #main: Redis;
  readonly #timeoutMs: number;
  readonly #maxCalls: number;
  readonly #maxInFlight: number;
  /** Batches written and not yet answered. */
  #inFlight = 0;
  #scheduled = false;
  #queue: Call[] = [];

  constructor(main: Redis, options: ScriptBatcherOptions) {
    this.#main = main;
    this.#timeoutMs = options.timeoutMs;
    this.#maxCalls = Math.max(2, options.maxCallsPerCommand ?? 256);
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  }

  /** Runs `script` with prefixed keys and string arguments; rejects with a CoordError. */
  run(script: CoordScript<unknown>, keys: string[], args: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ script, keys, args, enqueuedAt: Date.now(), resolve, reject, done: false });
      if (this.#inFlight < this.#maxInFlight) this.#schedule(false);
    });
  }

  /**
   * The queue leaves at the end of the current tick (after the microtasks, before any I/O): calls made by one
   * callback's continuations (settlements released by one charge commit) share a write at no wait.
   */
  #schedule(afterBatch: boolean): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    process.nextTick(() => {
      this.#scheduled = false;
      if (this.#inFlight >= this.#maxInFlight || this.#queue.length === 0) return;
      const calls = this.#queue;
      this.#queue = [];
      this.#send(calls, afterBatch);
    });
  }

  /** Writes `calls` (one socket write); the next queue leaves once every one of them is answered. */
  #send(calls: Call[], queued: boolean): void {
    this.#inFlight++;
    let open = calls.length;
    let timer: NodeJS.Timeout | undefined;
    const finish = (call: Call, error: CoordError | undefined, reply?: unknown): void => {
      if (call.done) return;
      call.done = true;
      if (error === undefined) call.resolve(reply);
      else call.reject(error);
      if (--open > 0) return;
      clearTimeout(timer);
      this.#inFlight--;
      if (this.#queue.length > 0) this.#schedule(true);
    };
    if (queued) {
      // ioredis times each command from its write; a queued call already waited, so its batch is timed from
      // its oldest call: no call waits longer than the timeout in all.
      const oldest = calls[0]?.enqueuedAt ?? Date.now();
      const left = Math.max(1, oldest + this.#timeoutMs - Date.now());
      timer = setTimeout(() => {
        const error = new CoordError(
          'unavailable',
          `redis unavailable: script call timed out after ${this.#timeoutMs} ms`,
        );
        for (const call of calls) finish(call, error);
      }, left);
    }
    const groups = new Map<CoordScript<unknown>, Call[]>();
    for (const call of calls) {
      const group = groups.get(call.script);
      if (group === undefined) groups.set(call.script, [call]);
      else group.push(call);
    }
    const stream = this.#main.status === 'ready' ? this.#main.stream : undefined;
    const cork = stream !== undefined && (groups.size > 1 || calls.length > this.#maxCalls);
    if (cork) stream.cork();
    try {
      for (const [script, group] of groups) {
        for (let i = 0; i < group.length; i += this.#maxCalls) {
          const chunk = group.slice(i, i + this.#maxCalls);
          if (chunk.length === 1) this.#one(script, chunk[0] as Call, finish);
          else this.#many(script, chunk, finish);
        }
      }
    } finally {
      if (cork) stream.uncork();
    }
  }

  #one(
    script: CoordScript<unknown>,
    call: Call,
    finish: (call: Call, error?: CoordError, reply?: unknown) => void,
  ): void {
    const { lua, sha } = single(script);
    this.#eval(sha, lua, call.keys, call.args).then(
      (reply) => finish(call, undefined, reply),
      (error: unknown) => finish(call, scriptError(script, error)),
    );
  }

  #many(
    script: CoordScript<unknown>,
    calls: Call[],
    finish: (call: Call, error?: CoordError, reply?: unknown) => void,
  ): void {
    const { lua, sha } = batch(script);
    const keys: string[] = [];
    const args: string[] = [String(calls.length)];
    for (const call of calls) {
      for (const key of call.keys) keys.push(key);
      args.push(String(call.keys.length), String(call.args.length));
      for (const arg of call.args) args.push(arg);
    }
    this.#eval(sha, lua, keys, args).then(
      (reply) => {
        calls.forEach((call, i) => {
          const item = Array.isArray(reply) ? reply[i] : undefined;
          if (Array.isArray(item) && item[0] === 1) finish(call, undefined, item.length > 1 ? item[1] : null);
          else if (Array.isArray(item) && item[0] === 0)
            finish(call, new CoordError('script_failed', `script ${script.name} failed: ${String(item[1])}`));
          else finish(call, new CoordError('script_failed', `unexpected reply of the batch of script ${script.name}`));
        });
      },
      (error: unknown) => {
        const coordError = scriptError(script, error);
        for (const call of calls) finish(call, coordError);
      },
    );
  }

  /** EVALSHA, or EVAL when Redis has not cached the script (first use, a restart, SCRIPT FLUSH). */
  async #eval(sha: string, lua: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.#main.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(isReplyError(error) && error.message.startsWith('NOSCRIPT'))) throw error;
      return await this.#main.eval(lua, keys.length, ...keys, ...args);
    }
  }
}
