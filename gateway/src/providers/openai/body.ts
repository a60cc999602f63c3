// The request body as the upstream receives it. OpenAI-style providers take the caller's body nearly as is,
// so it is copied shallowly once and serialized once: unknown fields pass through untouched.

export type BodyMode =
  /** A non-streaming call: `stream` and `stream_options` are dropped (OpenAI rejects stream_options without stream). */
  | 'once'
  /** A streaming call: `stream: true` is forced, the caller's `stream_options` (e.g. include_usage) pass through. */
  | 'stream';

/** `model` replaced by the upstream identifier, the gateway-only `fallbacks` removed. */
export function upstreamBody(req: Readonly<Record<string, unknown>>, model: string, mode: BodyMode): string {
  const { fallbacks: _fallbacks, stream: _stream, stream_options: streamOptions, ...copy } = req;
  const rest: Record<string, unknown> = copy;
  rest['model'] = model;
  if (mode === 'stream') {
    rest['stream'] = true;
    if (streamOptions !== undefined) rest['stream_options'] = streamOptions;
  }
  return JSON.stringify(rest);
}
