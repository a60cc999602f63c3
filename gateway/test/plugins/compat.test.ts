// The compat plugin's pure parts: which models count as chat-only or Responses-only, what is dropped where, and
// the chat <-> Responses and text <-> chat translations (tool calls included, which the fakes do not exercise).
import { describe, expect, it } from 'vitest';
import {
  chatToResponsesRequest,
  responsesStreamToChat,
  responsesToChatResponse,
} from '../../src/plugins/compat/chat-to-responses.ts';
import { dropUnsupported, isChatOnly, isResponsesOnly } from '../../src/plugins/compat/models.ts';
import { chatStreamToText, textToChatRequest } from '../../src/plugins/compat/text-to-chat.ts';
import type { ChatChunk, ChatRequest } from '../../src/schemas/chat.ts';
import type { ResponsesResponse, ResponsesStreamEvent } from '../../src/schemas/responses.ts';

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* from<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}

describe('model rules', () => {
  it('knows chat-only and Responses-only models', () => {
    expect(isChatOnly('openai', 'gpt-4o-mini', true)).toBe(true);
    expect(isChatOnly('openai', 'gpt-3.5-turbo-instruct', true)).toBe(false);
    expect(isChatOnly('azure', 'davinci-002', true)).toBe(false);
    expect(isChatOnly('anthropic', 'claude-sonnet-4-5', false)).toBe(true);
    expect(isChatOnly('groq', 'llama-3.1-8b-instant', true)).toBe(false);
    for (const m of [
      'o3-pro',
      'o1-pro-2025-03-19',
      'gpt-5-codex',
      'gpt-5.1-pro',
      'codex-mini-latest',
      'o3-deep-research',
    ]) {
      expect(isResponsesOnly('openai', m), m).toBe(true);
    }
    for (const m of ['o3', 'gpt-5', 'gpt-4o', 'gpt-5-mini']) expect(isResponsesOnly('openai', m), m).toBe(false);
    expect(isResponsesOnly('groq', 'o3-pro')).toBe(false);
  });

  it('drops per provider and model, and leaves a request that needs nothing dropped untouched', () => {
    const req: ChatRequest = {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.2,
      top_p: 0.5,
      logit_bias: { '1': 2 },
      max_tokens: 10,
      n: 2,
    };
    const o1 = dropUnsupported('openai', 'o1', req);
    expect(o1.dropped.sort()).toEqual(['logit_bias', 'max_tokens', 'temperature', 'top_p']);
    expect(o1.req).toMatchObject({ max_completion_tokens: 10, n: 2 });
    expect(req).toHaveProperty('temperature', 0.2);
    expect(dropUnsupported('openai', 'gpt-5-chat-latest', req).dropped).toEqual([]);
    expect(dropUnsupported('openai', 'gpt-4o', req).req).toBe(req);
    const claude = dropUnsupported('anthropic', 'claude-sonnet-4-5', req);
    expect(claude.dropped.sort()).toEqual(['n', 'top_p']);
    expect(dropUnsupported('bedrock', 'amazon.nova-pro-v1:0', req).dropped).toEqual(['n']);
  });
});

describe('chat -> Responses', () => {
  it('translates messages, tool calls and results, tools, tool choice and response format', () => {
    const r = chatToResponsesRequest(
      {
        model: 'o3-pro',
        messages: [
          { role: 'developer', content: 'rules' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'https://x/y.png' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'result' },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
        response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' }, strict: true } },
        reasoning_effort: 'high',
        max_completion_tokens: 99,
      },
      false,
    );
    expect(r).toMatchObject({
      model: 'o3-pro',
      store: false,
      max_output_tokens: 99,
      reasoning: { effort: 'high' },
      tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
      text: { format: { type: 'json_schema', name: 's', schema: { type: 'object' }, strict: true } },
      input: [
        { role: 'developer', content: 'rules' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' },
          ],
        },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'result' },
      ],
    });
  });

  it('refuses chat-only parameters unless dropping is on', () => {
    const req: ChatRequest = { model: 'o3-pro', messages: [{ role: 'user', content: 'x' }], seed: 1 };
    expect(() => chatToResponsesRequest(req, false)).toThrow(/seed has no Responses API equivalent/);
    expect(chatToResponsesRequest(req, true)).not.toHaveProperty('seed');
    expect(() => chatToResponsesRequest({ ...req, seed: undefined, n: 3 }, false)).toThrow(/n > 1/);
  });

  it('answers function calls as tool_calls, and an incomplete answer as length', () => {
    const base: ResponsesResponse = {
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model: 'o3-pro',
      output: [
        { type: 'reasoning', summary: [] },
        { type: 'function_call', call_id: 'c9', name: 'lookup', arguments: '{}' },
      ],
      usage: {
        input_tokens: 3,
        output_tokens: 4,
        total_tokens: 7,
        input_tokens_details: { cached_tokens: 1 },
        output_tokens_details: { reasoning_tokens: 2 },
      },
    };
    const chat = responsesToChatResponse(base);
    expect(chat.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'lookup' } }] },
    });
    expect(chat.usage).toMatchObject({
      prompt_tokens: 3,
      completion_tokens: 4,
      prompt_tokens_details: { cached_tokens: 1 },
    });
    const cut = responsesToChatResponse({
      ...base,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'partial' }] }],
    });
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'partial' } });
    expect(() => responsesToChatResponse({ ...base, status: 'failed', error: { message: 'nope' } })).toThrow(/nope/);
  });

  it('streams function calls as tool_call deltas', async () => {
    const events: ResponsesStreamEvent[] = [
      { type: 'response.created', response: { id: 'r', model: 'o3-pro', created_at: 5 } },
      {
        type: 'response.output_item.added',
        output_index: 1,
        item: { type: 'function_call', call_id: 'c1', name: 'f' },
      },
      { type: 'response.function_call_arguments.delta', output_index: 1, delta: '{"a":' },
      { type: 'response.function_call_arguments.delta', output_index: 1, delta: '1}' },
      {
        type: 'response.completed',
        response: {
          model: 'o3-pro',
          status: 'completed',
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
        },
      },
    ];
    const chunks = await all(responsesStreamToChat(from(events), true));
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks[1]?.choices[0]?.delta.tool_calls?.[0]).toMatchObject({ index: 0, id: 'c1', function: { name: 'f' } });
    const args = chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(args).toBe('{"a":1}');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 3 } });
    // Without include_usage the usage-only chunk is not made.
    expect((await all(responsesStreamToChat(from(events), false))).at(-1)?.choices[0]?.finish_reason).toBe(
      'tool_calls',
    );
  });
});

describe('text -> chat', () => {
  it('carries the parameters chat has and refuses what it lacks', () => {
    expect(textToChatRequest({ model: 'm', prompt: ['only one'], max_tokens: 5, stop: ['\n'], seed: 1 })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'only one' }],
      max_tokens: 5,
      stop: ['\n'],
      seed: 1,
    });
    expect(() => textToChatRequest({ model: 'm', prompt: [1, 2, 3] })).toThrow(/prompt: token ids/);
    expect(() => textToChatRequest({ model: 'm', prompt: 'x', echo: true })).toThrow(/echo/);
    expect(() => textToChatRequest({ model: 'm', prompt: 'x', best_of: 3 })).toThrow(/best_of/);
  });

  it('turns chat chunks into text completion chunks, skipping the role-only one', async () => {
    const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
    const chunks: ChatChunk[] = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'he' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'y' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    ];
    const out = await all(chatStreamToText(from(chunks)));
    expect(out.map((c) => c.choices[0]?.text ?? null)).toEqual(['he', 'y', '', null]);
    expect(out[2]?.choices[0]?.finish_reason).toBe('stop');
    expect(out[3]).toMatchObject({ object: 'text_completion', choices: [], usage: { total_tokens: 3 } });
  });
});
