import { describe, expect, it } from 'vitest';
import { ChatRequest } from '../../src/schemas/chat.ts';
import { isPlainChatRequest } from '../../src/schemas/chat-quick.ts';

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ABSENT = Symbol('absent');
const NUMBERS = [0, -0, 1, 2, 2.5, -1, 0.5, 1.5, 3, 1e21, 2 ** 53, -(2 ** 53), Number.MAX_VALUE];
const ODD = [null, true, false, '', 'x', [], {}, ['a'], [1], { include_usage: true }];

/** Candidate values per top-level field: valid ones, invalid ones, and the field left out. */
const FIELD_VALUES: Record<string, unknown[]> = {
  model: ['openai/gpt-4o-mini', '', 7, null],
  stream: [true, false, 'true', null, 1],
  stream_options: [null, {}, { include_usage: true }, { include_usage: 'yes' }, { other: 1 }, [], 'x'],
  max_tokens: [...NUMBERS, ...ODD],
  max_completion_tokens: [...NUMBERS, ...ODD],
  temperature: [...NUMBERS, ...ODD],
  top_p: [...NUMBERS, ...ODD],
  n: [...NUMBERS, ...ODD],
  stop: [null, 'x', '', ['a', 'b'], [], ['a', 1], 5, { a: 1 }],
  presence_penalty: [...NUMBERS, ...ODD],
  frequency_penalty: [...NUMBERS, ...ODD],
  seed: [...NUMBERS, ...ODD],
  user: ['u', '', null, 1],
  tools: [[], [{ type: 'function', function: { name: 'f' } }], [{ type: 'function', function: { name: '' } }], 'x'],
  tool_choice: ['auto', 'none', 'sometimes', { type: 'function', function: { name: 'f' } }, null],
  parallel_tool_calls: [true, false, null, 'true'],
  response_format: [{ type: 'text' }, { type: 'json_object' }, { type: 'xml' }, null],
  reasoning_effort: ['low', null, 1],
  fallbacks: [[], ['openai/gpt-4o'], [''], ['a', 2], 'openai/gpt-4o', null],
  metadata: [{ a: 1 }, null, 'anything'],
  top_k: [40, 'x'],
};

const MESSAGES: unknown[] = [
  { role: 'user', content: 'hi' },
  { role: 'user', content: '' },
  { role: 'user', content: 'hi', name: 'bob' },
  { role: 'user', content: 'hi', name: 5 },
  { role: 'user', content: 'hi', extra: { any: 'thing' } },
  { role: 'user', content: [{ type: 'text', text: 'hi' }] },
  { role: 'user', content: null },
  { role: 'user' },
  { role: 'system', content: 'be brief' },
  { role: 'developer', content: 'be brief' },
  { role: 'assistant', content: 'hello' },
  { role: 'assistant', content: null },
  { role: 'assistant', content: 'x', tool_calls: [] },
  { role: 'assistant', content: 'x', refusal: null },
  { role: 'assistant', content: 'x', reasoning_content: 7 },
  { role: 'tool', content: '{}', tool_call_id: 'call_1' },
  { role: 'tool', content: '{}' },
  { role: 'tool', content: '{}', tool_call_id: 'c', name: 3 },
  { role: 'function', content: 'x' },
  { role: 7, content: 'x' },
  { content: 'x' },
  'user: hi',
  null,
  [],
];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

function randomBody(r: () => number): unknown {
  if (r() < 0.02) return pick(r, [null, [], 'x', 1]);
  const body: Record<string, unknown> = {};
  if (r() < 0.97) body['model'] = r() < 0.8 ? 'openai/gpt-4o-mini' : pick(r, FIELD_VALUES['model'] ?? []);
  if (r() < 0.97) {
    const n = r() < 0.05 ? 0 : 1 + Math.floor(r() * 4);
    const plain = r() < 0.6;
    body['messages'] =
      r() < 0.03
        ? pick(r, ['hi', null, {}])
        : Array.from({ length: n }, () => structuredClone(plain ? MESSAGES[0] : pick(r, MESSAGES)));
  }
  for (const [field, values] of Object.entries(FIELD_VALUES)) {
    if (field === 'model' || r() < 0.9) continue;
    const v = pick(r, [...values, ABSENT]);
    if (v !== ABSENT) body[field] = structuredClone(v);
  }
  return body;
}

describe('isPlainChatRequest', () => {
  it('accepts only bodies that the ChatRequest schema accepts, and the schema returns them unchanged', () => {
    const r = rng(20261122);
    let quick = 0;
    let valid = 0;
    for (let i = 0; i < 20_000; i++) {
      const body = randomBody(r);
      const parsed = ChatRequest.safeParse(body);
      if (parsed.success) valid++;
      if (!isPlainChatRequest(body)) continue;
      quick++;
      // A failure here names the body the quick path let through wrongly.
      expect({ body, success: parsed.success }).toEqual({ body, success: true });
      expect(parsed.data).toEqual(body);
    }
    // The comparison means something only if both kinds of bodies were common.
    expect(quick).toBeGreaterThan(1_500);
    expect(valid - quick).toBeGreaterThan(500);
  });

  it('takes the everyday bodies: text messages of every role, scalar parameters, stream options, fallbacks', () => {
    const body = {
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi', name: 'bob' },
        { role: 'assistant', content: 'hello' },
        { role: 'tool', content: '{}', tool_call_id: 'call_1' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      temperature: 0.2,
      top_p: 1,
      stop: ['\n'],
      seed: 42,
      user: 'u-1',
      fallbacks: ['anthropic/claude-3-5-haiku'],
      metadata: { provider_specific: true },
    };
    expect(isPlainChatRequest(body)).toBe(true);
  });

  it('leaves content parts, tools, response formats and assistant tool calls to the schema', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(isPlainChatRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })).toBe(
      false,
    );
    expect(isPlainChatRequest({ ...base, tools: [] })).toBe(false);
    expect(isPlainChatRequest({ ...base, tool_choice: 'auto' })).toBe(false);
    expect(isPlainChatRequest({ ...base, response_format: { type: 'text' } })).toBe(false);
    expect(isPlainChatRequest({ ...base, messages: [{ role: 'assistant', content: 'x', tool_calls: [] }] })).toBe(
      false,
    );
  });
});
