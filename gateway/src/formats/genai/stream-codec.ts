// Gemini API streams as the caller asked for them: `?alt=sse` gives server-sent events (`data: {...}` each, what
// the SDKs use); without it Google streams one JSON array, written element by element (`[`, then elements joined
// by `,\r\n`, then `]`). The event that finishes the answer carries the gateway's `extra_fields`; a failure after
// the start is a last element `{"error": {code, message, status}}`, as Google sends it.
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import type { JsonObject } from '../../providers/types.ts';
import type { StreamCodec, StreamEncoder } from '../types.ts';
import type { GenaiCall } from './call.ts';
import { genaiFormat } from './format.ts';
import { usageOf } from './usage.ts';

/** The JSON-array stream's content type (callers without `alt=sse`). */
export const JSON_ARRAY_CONTENT_TYPE = 'application/json; charset=utf-8';

function finishes(ev: JsonObject): boolean {
  const c = ev['candidates'];
  return Array.isArray(c) && c.some((x: unknown) => typeof x === 'object' && x !== null && 'finishReason' in x);
}

export const genaiStream: StreamCodec<GenaiCall, JsonObject> = {
  contentType: SSE_CONTENT_TYPE,
  open(call): StreamEncoder<JsonObject> {
    const sse = call.action === 'generateContent' && call.sse;
    let first = true;
    const element = (json: string): string => {
      if (sse) return sseFrame(json);
      const sep = first ? '[' : ',\r\n';
      first = false;
      return sep + json;
    };
    return {
      contentType: sse ? SSE_CONTENT_TYPE : JSON_ARRAY_CONTENT_TYPE,
      usage: usageOf,
      chunk(ev, extra) {
        return element(JSON.stringify(finishes(ev) ? { ...ev, extra_fields: extra() } : ev));
      },
      end: () => (sse ? undefined : first ? '[]' : ']'),
      error(env) {
        const frame = element(JSON.stringify(genaiFormat.error(env).body));
        return sse ? frame : `${frame}]`;
      },
    };
  },
};
