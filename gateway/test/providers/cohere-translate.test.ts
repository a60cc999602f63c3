// Pure translation between the unified (OpenAI) chat format and Cohere's v2 chat and embed formats.
import { describe, expect, it } from 'vitest';
import { toChatResponse, toCohereChatRequest } from '../../src/providers/cohere/chat.ts';
import { DEFAULT_INPUT_TYPE, toEmbedRequest, tokenizeText } from '../../src/providers/cohere/embeddings.ts';
import { toChatChunks } from '../../src/providers/cohere/stream.ts';
import type { CohereStreamEvent } from '../../src/providers/cohere/wire.ts';
import { ProviderError } from '../../src/providers/errors.ts';
import { type ChatChunk, ChatRequest } from '../../src/schemas/chat.ts';
import { CountTokensRequest } from '../../src/schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../src/schemas/embeddings.ts';
import { collect, streamOf, thrown } from './helpers.ts';

const req = (body: Record<string, unknown>): ChatRequest =>
  ChatRequest.parse({ model: 'cohere/command-a-03-2025', messages: [{ role: 'user', content: 'hi' }], ...body });

/** The chunks the translator makes of these events. */
function chunksOf(events: CohereStreamEvent[], includeUsage = false): Promise<ChatChunk[]> {
  return collect(toChatChunks(streamOf(events), { model: 'command-a-03-2025', includeUsage, now: 0 }));
}

const weather = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const time = { type: 'function', function: { name: 'get_time', strict: true } };

describe('chat request', () => {
  it('maps roles, tool calls and tool results', () => {
    const body = toCohereChatRequest(
      req({
        messages: [
          { role: 'developer', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'weather ' },
              { type: 'text', text: 'in Paris?' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'I will look it up.',
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: '21C' },
          { role: 'assistant', content: 'It is 21C.' },
        ],
      }),
      'command-a-03-2025',
      false,
    );
    expect(body).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          tool_plan: 'I will look it up.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '21C' },
        { role: 'assistant', content: 'It is 21C.' },
      ],
    });
  });

  it('keeps images as image_url content and refuses audio', () => {
    const body = toCohereChatRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
            ],
          },
        ],
      }),
      'c',
      false,
    );
    expect(body.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is it' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
      ],
    });
    const audio = req({
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }],
    });
    expect(thrown(() => toCohereChatRequest(audio, 'c', false)).kind).toBe('invalid_request');
  });

  it('maps sampling parameters and JSON output', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const body = toCohereChatRequest(
      req({
        max_tokens: 30,
        temperature: 0.4,
        top_p: 0.8,
        top_k: 20,
        stop: ['END', 'STOP'],
        seed: 3,
        frequency_penalty: 0.1,
        presence_penalty: 0.2,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
        reasoning_effort: 'medium',
      }),
      'c',
      true,
    );
    expect(body).toMatchObject({
      stream: true,
      max_tokens: 30,
      temperature: 0.4,
      p: 0.8,
      k: 20,
      stop_sequences: ['END', 'STOP'],
      seed: 3,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      response_format: { type: 'json_object', json_schema: schema },
      thinking: { type: 'enabled' },
    });
    expect(toCohereChatRequest(req({ response_format: { type: 'json_object' } }), 'c', false).response_format).toEqual({
      type: 'json_object',
    });
  });

  it('maps tool_choice; a named function leaves only that tool and requires a call', () => {
    expect(toCohereChatRequest(req({ tools: [weather], tool_choice: 'required' }), 'c', false).tool_choice).toBe(
      'REQUIRED',
    );
    expect(toCohereChatRequest(req({ tools: [weather], tool_choice: 'none' }), 'c', false).tool_choice).toBe('NONE');
    expect(toCohereChatRequest(req({ tools: [weather], tool_choice: 'auto' }), 'c', false).tool_choice).toBeUndefined();
    const named = toCohereChatRequest(
      req({ tools: [weather, time], tool_choice: { type: 'function', function: { name: 'get_time' } } }),
      'c',
      false,
    );
    expect(named.tools).toEqual([{ type: 'function', function: { name: 'get_time' } }]);
    expect(named.tool_choice).toBe('REQUIRED');
    expect(named.strict_tools).toBe(true);
  });

  it('refuses n > 1', () => {
    expect(thrown(() => toCohereChatRequest(req({ n: 2 }), 'c', false)).message).toContain('n must be 1');
  });
});

describe('chat response', () => {
  it.each([
    ['COMPLETE', 'stop'],
    ['STOP_SEQUENCE', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['TOOL_CALL', 'tool_calls'],
  ])('maps finish_reason %s to %s', (reason, expected) => {
    const res = toChatResponse({ finish_reason: reason, message: { content: [{ type: 'text', text: 'x' }] } }, 'c');
    expect(res.choices[0]?.finish_reason).toBe(expected);
  });

  it('turns ERROR and TIMEOUT finishes into errors', () => {
    expect(thrown(() => toChatResponse({ finish_reason: 'ERROR' }, 'c'))).toMatchObject({
      kind: 'upstream',
      status: 502,
    });
    expect(thrown(() => toChatResponse({ finish_reason: 'TIMEOUT' }, 'c')).kind).toBe('timeout');
  });

  it('maps text, tool calls, tool plan and billed usage', () => {
    const res = toChatResponse(
      {
        id: 'r1',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'I will check.',
          tool_calls: [
            { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        usage: {
          billed_units: { input_tokens: 10, output_tokens: 4 },
          tokens: { input_tokens: 200, output_tokens: 9 },
          cached_tokens: 6,
        },
      },
      'command-a-03-2025',
      2_000_000,
    );
    expect(res).toEqual({
      id: 'r1',
      object: 'chat.completion',
      created: 2000,
      model: 'command-a-03-2025',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            reasoning_content: 'I will check.',
            tool_calls: [
              {
                id: 'get_weather_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 6 } },
    });
  });

  it('returns thinking as reasoning and falls back to raw token counts', () => {
    const res = toChatResponse(
      {
        finish_reason: 'COMPLETE',
        message: {
          content: [
            { type: 'thinking', thinking: 'hmm' },
            { type: 'text', text: 'Yes.' },
          ],
        },
        usage: { tokens: { input_tokens: 5, output_tokens: 2 } },
      },
      'c',
    );
    expect(res.choices[0]?.message).toEqual({ role: 'assistant', content: 'Yes.', reasoning_content: 'hmm' });
    expect(res.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });
});

describe('chat stream', () => {
  const textEvents: CohereStreamEvent[] = [
    { type: 'message-start', id: 'm1' },
    { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
    { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hel' } } } },
    { type: 'content-delta', index: 0, delta: { message: { content: { text: 'lo' } } } },
    { type: 'content-end', index: 0 },
    {
      type: 'message-end',
      delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 3, output_tokens: 2 } } },
    },
  ];

  it('yields role, text deltas and the finish, with usage only when asked', async () => {
    const chunks = await chunksOf(textEvents);
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hel' }, null],
      [{ content: 'lo' }, null],
      [{}, 'stop'],
    ]);
    expect(chunks.every((c) => c.id === 'm1')).toBe(true);
    const withUsage = await chunksOf(textEvents, true);
    expect(withUsage.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('numbers tool calls from 0 and streams their arguments', async () => {
    const chunks = await chunksOf([
      { type: 'message-start', id: 'm2' },
      { type: 'tool-plan-delta', delta: { message: { tool_plan: 'Looking up.' } } },
      {
        type: 'tool-call-start',
        index: 1,
        delta: {
          message: { tool_calls: { id: 't1', type: 'function', function: { name: 'get_weather', arguments: '' } } },
        },
      },
      {
        type: 'tool-call-delta',
        index: 1,
        delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } },
      },
      { type: 'tool-call-delta', index: 1, delta: { message: { tool_calls: { function: { arguments: '"Oslo"}' } } } } },
      { type: 'tool-call-end', index: 1 },
      { type: 'message-end', delta: { finish_reason: 'TOOL_CALL' } },
    ]);
    expect(chunks.slice(1).map((c) => c.choices[0])).toEqual([
      { index: 0, delta: { reasoning_content: 'Looking up.' }, finish_reason: null },
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        },
        finish_reason: null,
      },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'tool_calls' },
    ]);
  });

  it('ends with an error when the upstream finishes with ERROR', async () => {
    const err = await chunksOf([
      textEvents[0]!,
      { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'overloaded' } },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toContain('overloaded'); // checked to be a ProviderError just above
  });
});

describe('embed and tokenize', () => {
  it('defaults input_type to search_document and passes one through', () => {
    expect(toEmbedRequest(EmbeddingRequest.parse({ model: 'x', input: 'a' }), 'embed-v4.0')).toEqual({
      model: 'embed-v4.0',
      texts: ['a'],
      input_type: DEFAULT_INPUT_TYPE,
      embedding_types: ['float'],
    });
    expect(
      toEmbedRequest(
        EmbeddingRequest.parse({ model: 'x', input: ['a'], input_type: 'search_query', dimensions: 256 }),
        'e',
      ),
    ).toMatchObject({ input_type: 'search_query', output_dimension: 256 });
    expect(thrown(() => toEmbedRequest(EmbeddingRequest.parse({ model: 'x', input: [[1, 2]] }), 'e')).kind).toBe(
      'invalid_request',
    );
  });

  it('tokenizes message texts, tool calls and tool definitions', () => {
    const text = tokenizeText(
      CountTokensRequest.parse({
        model: 'c',
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        ],
        tools: [{ type: 'function', function: { name: 'f' } }],
      }),
    );
    expect(text).toBe('sys\nf\n{}\n{"name":"f"}');
  });
});
