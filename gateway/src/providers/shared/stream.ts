// One read loop for streamed bodies whose decoding and translating are separate steps (Anthropic SSE events,
// Bedrock event-stream frames): failures, early stops and cut-off streams are handled the same way for both.
import { bodyReadError } from './http.ts';

/** An upstream response body: bytes as they arrive, a way to close it before its end, and its bound (sse.ts). */
export type UpstreamBody = AsyncIterable<Uint8Array> & {
  destroy(): unknown;
  readableEnded?: boolean;
  readonly maxBytes?: number;
};

/**
 * Yields what `translate` makes of each item decoded from `body`, as items arrive. A failed read becomes a
 * ProviderError (ProviderErrors from decoding or translating pass through); the body is closed when the consumer
 * stops early; `atEnd` runs once the body has ended and throws if the stream was cut off.
 */
export async function* translateBody<I, O>(
  body: UpstreamBody,
  items: AsyncIterable<I>,
  translate: (item: I) => Iterable<O>,
  atEnd: () => void,
): AsyncGenerator<O> {
  try {
    for await (const item of items) for (const out of translate(item)) yield out;
  } catch (err) {
    throw bodyReadError(err);
  } finally {
    // Closes the upstream body when the consumer stops early, so the connection is not left half-read.
    if (!body.readableEnded) body.destroy();
  }
  atEnd();
}
