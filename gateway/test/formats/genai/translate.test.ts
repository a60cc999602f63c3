// The pure pieces of the Gemini API format: the path split, the request translation to the unified chat
// schema, and the answer and stream translation back.
import { describe, expect, it } from 'vitest';
import { fromChatResponse, toGenaiEvents } from '../../../src/formats/genai/from-chat.ts';
import { splitModelPath } from '../../../src/formats/genai/operations.ts';
import { GenerateContentRequest } from '../../../src/formats/genai/schema.ts';
import { openApiToJsonSchema, toChatRequest } from '../../../src/formats/genai/to-chat.ts';
import { GatewayError } from '../../../src/http/errors.ts';
import type { ChatChunk } from '../../../src/schemas/chat.ts';

describe('splitModelPath', () => {
  it('splits at the last colon and drops models/', () => {
    expect(splitModelPath('gemini-2.5-flash:generateContent')).toEqual({
      model: 'gemini-2.5-flash',
      method: 'generateContent',
    });
    expect(splitModelPath('bedrock/anthropic.claude-v1:0:streamGenerateContent')).toEqual({
      model: 'bedrock/anthropic.claude-v1:0',
      method: 'streamGenerateContent',
    });
    expect(splitModelPath('models/x:countTokens').model).toBe('x');
  });

  it('an unknown or missing method is not found', () => {
    expect(() => splitModelPath('x:fly')).toThrow(GatewayError);
    expect(() => splitModelPath('x')).toThrow(/not a Gemini API method/);
  });
});

describe('toChatRequest', () => {
  const req = GenerateContentRequest.parse({
    systemInstruction: { parts: [{ text: 'Be terse.' }] },
    contents: [
      { role: 'user', parts: [{ text: 'weather?' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
      {
        role: 'model',
        parts: [{ text: 'hmm', thought: true }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { t: 21 } } }] },
    ],
    tools: [
      {
        functionDeclarations: [
          { name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } },
        ],
      },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    generationConfig: {
      temperature: 0.2,
      maxOutputTokens: 9,
      stopSequences: ['x'],
      thinkingConfig: { thinkingBudget: 0 },
    },
  });

  it('carries system, images, calls paired with their responses, tools and config', () => {
    const chat = toChatRequest(req, 'gpt-4o-mini', true);
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'weather?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"t":21}' },
    ]);
    expect(chat.tools?.[0]?.function.parameters).toEqual({ type: 'object', properties: { city: { type: 'string' } } });
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat).toMatchObject({ temperature: 0.2, max_tokens: 9, stop: ['x'], reasoning_effort: 'none' });
    expect(chat.stream_options).toEqual({ include_usage: true });
  });

  it('refuses Gemini-only tools, naming them', () => {
    const bad = GenerateContentRequest.parse({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] });
    expect(() => toChatRequest(bad, 'm', false)).toThrow(/tools\[0\]\.googleSearch/);
  });

  it('nullable OpenAPI types become JSON Schema unions', () => {
    expect(openApiToJsonSchema({ type: 'STRING', nullable: true })).toEqual({ type: ['string', 'null'] });
  });
});

describe('answers back in Gemini’s shape', () => {
  it('a chat response: thoughts first, calls as functionCall, usage as usageMetadata', () => {
    const out = fromChatResponse({
      id: 'r1',
      object: 'chat.completion',
      created: 0,
      model: 'gpt',
      choices: [
        {
          index: 0,
          finish_reason: 'length',
          message: {
            role: 'assistant',
            content: 'hi',
            reasoning_content: 'think',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
      usage: {
        prompt_tokens: 3,
        completion_tokens: 5,
        total_tokens: 8,
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
    expect(out).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'think', thought: true },
              { text: 'hi' },
              { functionCall: { id: 'c1', name: 'f', args: { a: 1 } } },
            ],
          },
          index: 0,
          finishReason: 'MAX_TOKENS',
        },
      ],
      modelVersion: 'gpt',
      responseId: 'r1',
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 3, totalTokenCount: 8, thoughtsTokenCount: 2 },
    });
  });

  it('a stream: text as it comes, a call whole at the finish, usage with the finishing event', async () => {
    const base = { id: 's', object: 'chat.completion.chunk' as const, created: 0, model: 'm' };
    const chunks: ChatChunk[] = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"x"' } }] },
            finish_reason: null,
          },
        ],
      },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
      { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    ];
    async function* gen() {
      yield* chunks;
    }
    const events = [];
    for await (const e of toGenaiEvents(gen())) events.push(e);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ candidates: [{ content: { parts: [{ text: 'a' }] } }] });
    expect(events[1]).toMatchObject({
      candidates: [
        { content: { parts: [{ functionCall: { id: 'c', name: 'f', args: { x: 1 } } }] }, finishReason: 'STOP' },
      ],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 },
    });
  });
});
