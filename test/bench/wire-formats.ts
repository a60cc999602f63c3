// The wire-format targets: the same gateway process called in another client's wire format, to show that
// a same-format request on `/compat-a` or `/anthropic` adds no more than `/v1` does. Each has its request
// (plain and streamed), the mark that ends its stream, and a smoke check; a target whose check fails is
// skipped with the reason (e.g. a route not built yet), and the rest of the run goes on.
import { request } from 'undici';
import { MOCK_TEXT, PASS_THROUGH_MARK } from './mock-anthropic.ts';
import { ANTHROPIC, COMPAT_A, type FormatTargetName } from './report-wire.ts';

export interface FormatRequest {
  path: string;
  body(stream: boolean): Buffer;
  headers?: Record<string, string>;
  /** Bytes the end of a complete stream holds. */
  endMark: Buffer;
  /** A plain answer that went the intended way holds this. */
  answerMark: string;
}

const PROMPT = 'Say hello in five words.';
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

export const FORMAT_REQUESTS: Record<FormatTargetName, FormatRequest> = {
  // OpenAI's own model rule: a bare model goes to `openai`, the mock, as on /v1 with `openai/`.
  [COMPAT_A]: {
    path: '/compat-a/v1/chat/completions',
    body: (stream) =>
      json({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: PROMPT }],
        max_tokens: 32,
        ...(stream ? { stream: true } : {}),
      }),
    endMark: Buffer.from('[DONE]'),
    answerMark: MOCK_TEXT,
  },
  // A bare Claude model goes to the `anthropic` provider: same format, so the body is passed through.
  [ANTHROPIC]: {
    path: '/anthropic/v1/messages',
    body: (stream) =>
      json({
        model: 'claude-sonnet-4-5',
        max_tokens: 32,
        messages: [{ role: 'user', content: PROMPT }],
        ...(stream ? { stream: true } : {}),
      }),
    // What the Anthropic SDK sends; the gateway sends its own version upstream.
    headers: { 'anthropic-version': '2023-06-01' },
    endMark: Buffer.from('message_stop'),
    // Only a pass-through keeps a field the Messages API does not define: proof that no translation ran.
    answerMark: `"${PASS_THROUGH_MARK}":true`,
  },
};

/** One plain and one streamed request in the target's format; what is wrong, or undefined. */
export async function checkFormat(origin: string, name: FormatTargetName): Promise<string | undefined> {
  const spec = FORMAT_REQUESTS[name];
  for (const stream of [false, true]) {
    const what = `POST ${spec.path}${stream ? ' (stream)' : ''}`;
    try {
      const res = await request(`${origin}${spec.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        body: spec.body(stream),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) return `${what} answered ${res.statusCode}: ${text.slice(0, 300)}`;
      if (stream && !text.slice(-200).includes(spec.endMark.toString()))
        return `${what} did not end with ${spec.endMark.toString()}: ${text.slice(-300)}`;
      if (!stream && !text.includes(spec.answerMark))
        return `${what} answered without ${spec.answerMark}: ${text.slice(0, 300)}`;
    } catch (error) {
      return `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return undefined;
}
