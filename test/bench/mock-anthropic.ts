// The Anthropic half of the bench's mock upstream: POST /v1/messages answers a fixed Messages API message
// (with usage), and with `stream: true` Anthropic's SSE event sequence, its text deltas `gapMs` apart, so
// the `/anthropic` target's streams have the same shape in time as the OpenAI mock's. Every frame is
// serialised once at start-up: the mock should cost as little as possible per request.
import type { ServerResponse } from 'node:http';

/** The answer's text, shared with the OpenAI mock so one smoke check recognises both. */
export const MOCK_TEXT = 'Hello from the bench mock.';
/**
 * A field the Messages API does not define: a same-format pass-through returns it untouched, a translation
 * through the unified chat schema drops it, so the bench's smoke check can tell which path served it.
 */
export const PASS_THROUGH_MARK = 'bench_passthrough_mark';

const MODEL = 'claude-sonnet-4-5';
const INPUT_TOKENS = 12;

const MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content: [{ type: 'text', text: MOCK_TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: INPUT_TOKENS,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
    [PASS_THROUGH_MARK]: true,
  }),
);
const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': String(MESSAGE.length) };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

const frame = (data: { type: string } & Record<string, unknown>): string =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

export interface AnthropicStreamFrames {
  /** message_start, content_block_start and the first text delta: sent at once, like the OpenAI mock's first chunk. */
  first: Buffer;
  /** The other text deltas, one per gap. */
  deltas: Buffer[];
  /** content_block_stop, message_delta (with usage) and message_stop, sent with the last delta. */
  end: Buffer;
}

/** The stream's frames for `chunks` text deltas (at least one). */
export function anthropicFrames(chunks: number): AnthropicStreamFrames {
  const delta = (i: number): string =>
    frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `tok${i} ` } });
  const start = frame({
    type: 'message_start',
    message: {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: INPUT_TOKENS,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  const blockStart = frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  const deltas: Buffer[] = [];
  for (let i = 1; i < chunks; i++) deltas.push(Buffer.from(delta(i)));
  const end = [
    frame({ type: 'content_block_stop', index: 0 }),
    frame({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: chunks },
    }),
    frame({ type: 'message_stop' }),
  ].join('');
  return { first: Buffer.from(start + blockStart + delta(0)), deltas, end: Buffer.from(end) };
}

/** Answers one POST /v1/messages: the fixed message, or its events `gapMs` apart when `stream` is true. */
export function answerMessages(
  res: ServerResponse,
  stream: boolean,
  frames: AnthropicStreamFrames,
  gapMs: number,
): void {
  if (!stream) {
    res.writeHead(200, JSON_HEADERS);
    res.end(MESSAGE);
    return;
  }
  res.writeHead(200, SSE_HEADERS);
  res.write(frames.first);
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    if (res.destroyed) return;
    const delta = frames.deltas[i];
    i += 1;
    if (i < frames.deltas.length && delta !== undefined) {
      res.write(delta);
      timer = setTimeout(next, gapMs);
      return;
    }
    res.end(delta === undefined ? frames.end : Buffer.concat([delta, frames.end]));
  };
  res.once('close', () => clearTimeout(timer));
  if (frames.deltas.length === 0) res.end(frames.end);
  else timer = setTimeout(next, gapMs);
}
