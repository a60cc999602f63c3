// Shared by the provider adapter tests: the call context an adapter gets, the fake upstream's lifecycle, and small
// ways to read results (collect a stream, catch the ProviderError a call or a stream fails with).
import type { Agent, Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { FakeServer } from '../../../test/fakes/server.ts';
import { ProviderError } from '../../src/providers/errors.ts';
import type { CallContext, NetworkConfig, ProviderKey } from '../../src/providers/types.ts';
import { ChatRequest } from '../../src/schemas/chat.ts';

/** One call to `base_url` with no retries and a fresh signal; `key` and `network` are laid over the defaults. */
export function callContext(o: {
  provider: string;
  model: string;
  base_url: string;
  dispatcher: Dispatcher;
  key?: Partial<ProviderKey>;
  network?: Partial<NetworkConfig>;
}): CallContext {
  return {
    provider: o.provider,
    model: o.model,
    key: { id: 'k1', name: 'k1', value: '', models: [], weight: 1, aliases: {}, ...o.key },
    network: {
      base_url: o.base_url,
      timeout_ms: 5000,
      extra_headers: {},
      max_retries: 0,
      retry_backoff_initial_ms: 0,
      retry_backoff_max_ms: 0,
      max_response_bytes: 32 * 1024 * 1024,
      ...o.network,
    },
    signal: new AbortController().signal,
    dispatcher: o.dispatcher,
  };
}

/** What a test changes about one call: the model, fields of the key, the timeout. */
export interface CallOverrides {
  model?: string;
  key?: Partial<ProviderKey>;
  timeout_ms?: number;
}

/** `ctx(over)` for one adapter: its name, default model, key and headers, at the fake's URL once it is started. */
export function contextFor(d: {
  provider: string;
  model: string;
  key: Partial<ProviderKey>;
  fake: { readonly url: string };
  dispatcher: Dispatcher;
  extra_headers?: Record<string, string>;
}): (over?: CallOverrides) => CallContext {
  return (over = {}) =>
    callContext({
      provider: d.provider,
      model: over.model ?? d.model,
      base_url: d.fake.url,
      dispatcher: d.dispatcher,
      key: { ...d.key, ...over.key },
      network: { timeout_ms: over.timeout_ms ?? 5000, extra_headers: { ...d.extra_headers } },
    });
}

/**
 * Registers the file's hooks for `fake`: start it (then `started`) before the tests; after each, `reset` it
 * (default: forget requests and scripts) and put `defaults` back; at the end stop it and close the dispatcher.
 */
export function useFake<F extends FakeServer>(
  fake: F,
  o: { dispatcher: Agent; defaults?: Partial<F>; reset?: (fake: F) => void; started?: (fake: F) => void },
): F {
  beforeAll(async () => {
    await fake.start();
    o.started?.(fake);
  });
  afterEach(() => {
    if (o.reset) o.reset(fake);
    else fake.reset();
    Object.assign(fake, o.defaults);
  });
  afterAll(async () => {
    await fake.stop();
    await o.dispatcher.close();
  });
  return fake;
}

/** `chat(body)`: a ChatRequest to `model` with one user message, `body` laid over it. */
export function chatFor(model: string, content: string): (body?: Record<string, unknown>) => ChatRequest {
  return (body = {}) => ChatRequest.parse({ model, messages: [{ role: 'user', content }], ...body });
}

/** The function tool the tool-calling tests offer. */
export const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The stream's first item, and `readRest` to read the others, so a test can look at the upstream in between. */
export async function firstThen<T>(
  stream: AsyncIterable<T>,
): Promise<{ first: T | undefined; readRest: () => Promise<T[]> }> {
  const iter = stream[Symbol.asyncIterator]();
  const head = await iter.next();
  const readRest = async (): Promise<T[]> => {
    const out: T[] = [];
    for (let r = await iter.next(); !r.done; r = await iter.next()) out.push(r.value);
    return out;
  };
  return { first: head.done ? undefined : head.value, readRest };
}

/** The events as an async stream, the way a parsed upstream body reaches a stream translator. */
export async function* streamOf<T>(events: readonly T[]): AsyncGenerator<T> {
  yield* events;
}

/** Awaits `p` and returns the ProviderError it rejects with (failing the test if it does not). */
export async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  // Checked by the assertion above.
  return err as ProviderError;
}

/** Reads `stream` until it throws; the ProviderError it threw and the items that came before. */
export async function failMidStream<T>(stream: AsyncIterable<T>): Promise<{ seen: T[]; err: ProviderError }> {
  const seen: T[] = [];
  const err = await failure(
    (async () => {
      for await (const c of stream) seen.push(c);
    })(),
  );
  return { seen, err };
}

/** Runs `fn` and returns the ProviderError it throws (failing the test if it throws none or another). */
export function thrown(fn: () => unknown): ProviderError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    // Checked just above.
    return err as ProviderError;
  }
  throw new Error('expected a ProviderError');
}
