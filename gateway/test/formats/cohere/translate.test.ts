// The Cohere format's pure translators: request to the unified chat, the unified answer and stream back to
// Cohere's shapes, Cohere usage read for budgets, and embed across formats.
import { describe, expect, it } from 'vitest';
import { toEmbedAnswer, toEmbeddingRequest } from '../../../src/formats/cohere/embed.ts';
import { fromCohereUsage, toChatAnswer } from '../../../src/formats/cohere/from-chat.ts';
import { ChatRequest, EmbedRequest } from '../../../src/formats/cohere/schema.ts';
import { cohereEvents } from '../../../src/formats/cohere/stream-from-chat.ts';
import { toChatRequest } from '../../../src/formats/cohere/to-chat.ts';
import { ProviderError } from '../../../src/providers/errors.ts';
import type { NativeEvent } from '../../../src/providers/types.ts';
import type { ChatChunk, ChatResponse } from '../../../src/schemas/chat.ts';

const chat = (body: unknown) => ChatRequest.parse(body);

describe('toChatRequest', () => {
  it('maps roles, tools, tool results and sampling parameters', () => {
    const req = toChatRequest(
      chat({
        model: 'openai/gpt-4o-mini',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'terse' }] },
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            tool_plan: 'I will look it up.',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: [{ type: 'document', document: { data: { t: 21 } } }] },
        ],
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
        strict_tools: true,
        tool_choice: 'REQUIRED',
        response_format: { type: 'json_object', json_schema: { type: 'object' } },
        max_tokens: 10,
        temperature: 0.2,
        p: 0.9,
        k: 5,
        stop_sequences: ['END'],
        seed: 3,
        safety_mode: 'OFF',
      }),
      false,
    );
    expect(req).toEqual({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'terse' },
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'I will look it up.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"t":21}' },
      ],
      tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' }, strict: true } }],
      tool_choice: 'required',
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } },
      max_tokens: 10,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      seed: 3,
    });
  });

  it('puts documents in a system message after the caller’s own, and asks for stream usage', () => {
    const req = toChatRequest(
      chat({
        model: 'm',
        messages: [
          { role: 'system', content: 'first' },
          { role: 'user', content: 'q' },
        ],
        documents: ['plain', { id: 'd2', data: { title: 'T' } }],
      }),
      true,
    );
    expect(req.messages[1]).toEqual({
      role: 'system',
      content: 'Use these documents to answer:\n[0] plain\n[d2] {"title":"T"}',
    });
    expect(req.stream_options).toEqual({ include_usage: true });
  });

  it('keeps images of user messages', () => {
    const req = toChatRequest(
      chat({
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } },
            ],
          },
        ],
      }),
      false,
    );
    expect(req.messages[0]?.content).toEqual([
      { type: 'text', text: 'what?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } },
    ]);
  });
});

describe('the schema', () => {
  it('refuses hostile values', () => {
    const ok = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect(ChatRequest.safeParse(ok).success).toBe(true);
    for (const bad of [
      { ...ok, temperature: -1 },
      { ...ok, max_tokens: 1.5 },
      { ...ok, tool_choice: 'ANY' },
      { ...ok, messages: [{ role: 'tool', content: 'x' }] },
      { ...ok, model: '' },
    ]) {
      expect(ChatRequest.safeParse(bad).success).toBe(false);
    }
  });
});

const answer = (
  over: Partial<ChatResponse['choices'][number]['message']>,
  finish: 'stop' | 'tool_calls',
): ChatResponse => ({
  id: 'x1',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...over }, finish_reason: finish }],
  usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, prompt_tokens_details: { cached_tokens: 1 } },
});

describe('toChatAnswer', () => {
  it('answers text with COMPLETE and usage as billed units and tokens', () => {
    expect(toChatAnswer(answer({ content: 'hi', reasoning_content: 'hmm' }, 'stop'))).toEqual({
      id: 'x1',
      finish_reason: 'COMPLETE',
      message: {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'hi' },
        ],
      },
      usage: {
        billed_units: { input_tokens: 4, output_tokens: 2 },
        tokens: { input_tokens: 4, output_tokens: 2 },
        cached_tokens: 1,
      },
    });
  });

  it('answers tool calls with TOOL_CALL', () => {
    const call = { id: 'c', type: 'function' as const, function: { name: 'w', arguments: '{}' } };
    const res = toChatAnswer(answer({ tool_calls: [call] }, 'tool_calls'));
    expect(res['finish_reason']).toBe('TOOL_CALL');
    expect(res['message']).toMatchObject({ tool_calls: [call] });
  });
});

describe('fromCohereUsage', () => {
  it('prefers billed units, falls back to tokens, ignores garbage', () => {
    expect(
      fromCohereUsage({ billed_units: { input_tokens: 3, output_tokens: 2 }, tokens: { input_tokens: 9 } }),
    ).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(fromCohereUsage({ tokens: { input_tokens: 9, output_tokens: 1 } })).toEqual({
      prompt_tokens: 9,
      completion_tokens: 1,
      total_tokens: 10,
    });
    expect(fromCohereUsage({ billed_units: { input_tokens: -4, output_tokens: 'x' } })).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
    });
    expect(fromCohereUsage(undefined)).toBeUndefined();
  });
});

function chunk(delta: ChatChunk['choices'][number]['delta'], finish: 'stop' | 'tool_calls' | null = null): ChatChunk {
  return {
    id: 'k',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

async function events(chunks: ChatChunk[]): Promise<NativeEvent[]> {
  async function* gen() {
    yield* chunks;
  }
  const out: NativeEvent[] = [];
  for await (const e of cohereEvents(gen(), 'id-1')) out.push(e);
  return out;
}

describe('cohereEvents', () => {
  it('streams text as content events and ends with message-end carrying the usage chunk’s counts', async () => {
    const usage: ChatChunk = {
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
    };
    const out = await events([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'a ' }),
      chunk({ content: 'b' }),
      chunk({}, 'stop'),
      usage,
    ]);
    expect(out.map((e) => e.event)).toEqual([
      'message-start',
      'content-start',
      'content-delta',
      'content-delta',
      'content-end',
      'message-end',
    ]);
    expect(out[0]?.data).toMatchObject({ id: 'id-1' });
    expect(out.at(-1)?.data).toEqual({
      type: 'message-end',
      delta: {
        finish_reason: 'COMPLETE',
        usage: { billed_units: { input_tokens: 2, output_tokens: 2 }, tokens: { input_tokens: 2, output_tokens: 2 } },
      },
    });
  });

  it('streams tool calls as tool-call-start, -delta and -end, numbered from 0', async () => {
    const out = await events([
      chunk({ content: 'let me see' }),
      chunk({ tool_calls: [{ index: 3, id: 'c1', type: 'function', function: { name: 'w', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 3, function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 3, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(out.map((e) => e.event)).toEqual([
      'message-start',
      'content-start',
      'content-delta',
      'content-end',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-delta',
      'tool-call-end',
      'message-end',
    ]);
    expect(out[4]?.data).toMatchObject({
      index: 0,
      delta: { message: { tool_calls: { id: 'c1', function: { name: 'w' } } } },
    });
    expect(out.at(-1)?.data).toMatchObject({ delta: { finish_reason: 'TOOL_CALL' } });
  });
});

describe('embed across formats', () => {
  const body = (over: Record<string, unknown>) =>
    EmbedRequest.parse({ model: 'openai/e', texts: ['a'], input_type: 'search_query', ...over });

  it('asks for floats and answers every requested type', () => {
    const b = body({ embedding_types: ['float', 'base64'], output_dimension: 2 });
    expect(toEmbeddingRequest(b)).toEqual({ model: 'openai/e', input: ['a'], encoding_format: 'float', dimensions: 2 });
    const res = toEmbedAnswer(
      {
        object: 'list',
        model: 'e',
        data: [{ object: 'embedding', index: 0, embedding: [0.5, -1] }],
        usage: { prompt_tokens: 1, total_tokens: 1 },
      },
      b,
      'e1',
    );
    const embeddings = res['embeddings'] as { float: number[][]; base64: string[] };
    expect(embeddings.float).toEqual([[0.5, -1]]);
    const bytes = Buffer.from(embeddings.base64[0] ?? '', 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.5, -1]);
    expect(res['meta']).toMatchObject({ billed_units: { input_tokens: 1 } });
  });

  it('refuses quantized types and non-text inputs', () => {
    expect(() => toEmbeddingRequest(body({ embedding_types: ['int8'] }))).toThrow(ProviderError);
    expect(() => toEmbeddingRequest(body({ images: ['data:image/png;base64,AA=='] }))).toThrow(/texts/);
  });
});
