// Pure translation of Gemini responses, stream events and errors into the unified (OpenAI) format.
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/errors.ts';
import { parseGoogleError } from '../../src/providers/gemini/errors.ts';
import { geminiUrl } from '../../src/providers/gemini/index.ts';
import { toChatResponse } from '../../src/providers/gemini/response.ts';
import { toChatChunks } from '../../src/providers/gemini/stream.ts';
import type { GenerateContentResponse } from '../../src/providers/gemini/wire.ts';
import type { ChatChunk } from '../../src/schemas/chat.ts';
import { collect, streamOf } from './helpers.ts';

/** The chunks the translator makes of these events. */
function chunksOf(events: GenerateContentResponse[], includeUsage = false): Promise<ChatChunk[]> {
  return collect(toChatChunks(streamOf(events), { model: 'gemini-2.5-flash', includeUsage, now: 0 }));
}

describe('chat response', () => {
  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['OTHER', 'stop'],
  ])('maps finishReason %s to %s', (reason, expected) => {
    const res = toChatResponse({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: reason }] }, 'm');
    expect(res.choices[0]?.finish_reason).toBe(expected);
  });

  it('splits thoughts from text, reports usage with cached and reasoning tokens', () => {
    const res = toChatResponse(
      {
        candidates: [
          {
            content: { parts: [{ text: 'pondering', thought: true }, { text: 'Hello' }, { text: '!' }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 2,
          thoughtsTokenCount: 5,
          cachedContentTokenCount: 4,
          totalTokenCount: 17,
        },
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'r1',
      },
      'gemini-2.5-flash',
      1_700_000_000_000,
    );
    expect(res).toEqual({
      id: 'r1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello!', reasoning_content: 'pondering' },
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 7,
        total_tokens: 17,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    });
  });

  it('returns function calls as tool_calls with stable ids and the thought signature', () => {
    const upstream: GenerateContentResponse = {
      responseId: 'abc',
      candidates: [
        {
          content: {
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
              { functionCall: { id: 'given-id', name: 'get_time', args: {} } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    };
    const first = toChatResponse(upstream, 'm');
    const again = toChatResponse(upstream, 'm');
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'call_abc_0_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        extra_content: { google: { thought_signature: 'c2ln' } },
      },
      { id: 'given-id', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(again.choices[0]?.message.tool_calls?.[0]?.id).toBe('call_abc_0_0');
  });

  it('reports a blocked prompt as a content_filter finish', () => {
    const res = toChatResponse({ promptFeedback: { blockReason: 'SAFETY' } }, 'm');
    expect(res.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' },
    ]);
  });
});

describe('chat stream', () => {
  const events: GenerateContentResponse[] = [
    { responseId: 'r9', candidates: [{ content: { parts: [{ text: 'hm', thought: true }] } }] },
    {
      responseId: 'r9',
      candidates: [{ content: { parts: [{ text: 'Hel' }] } }],
      usageMetadata: { promptTokenCount: 3 },
    },
    {
      responseId: 'r9',
      candidates: [{ content: { parts: [{ text: 'lo' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
    },
  ];

  it('yields one chunk per event, role first, finish last, usage only when asked', async () => {
    const chunks = await chunksOf(events);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', reasoning_content: 'hm' },
      { content: 'Hel' },
      { content: 'lo' },
    ]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, 'stop']);
    expect(chunks.every((c) => c.id === 'r9' && c.object === 'chat.completion.chunk')).toBe(true);
    const withUsage = await chunksOf(events, true);
    expect(withUsage.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('streams function calls whole, with the same ids as the non-streamed answer', async () => {
    const call: GenerateContentResponse = {
      responseId: 'r2',
      candidates: [
        {
          content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
          finishReason: 'STOP',
        },
      ],
    };
    const [chunk] = await chunksOf([call]);
    expect(chunk?.choices[0]).toEqual({
      index: 0,
      delta: {
        role: 'assistant',
        tool_calls: [
          {
            index: 0,
            id: 'call_r2_0_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
    });
    expect(toChatResponse(call, 'm').choices[0]?.message.tool_calls?.[0]?.id).toBe('call_r2_0_0');
  });

  it('turns an error event into a ProviderError', async () => {
    const err = await chunksOf([
      events[1]!,
      { error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'upstream', status: 429, type: 'RESOURCE_EXHAUSTED' });
  });
});

describe('errors and URLs', () => {
  it('reads status, reason and retry delay from Google error bodies, also when wrapped in an array', () => {
    const body = {
      error: {
        code: 429,
        message: 'quota',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED' },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37.5s' },
        ],
      },
    };
    const expected = { message: 'quota', type: 'RESOURCE_EXHAUSTED', code: 'RATE_LIMIT_EXCEEDED', retryAfter: 38 };
    expect(parseGoogleError(429, body, '')).toEqual(expected);
    expect(parseGoogleError(429, [body], '')).toEqual(expected);
    expect(parseGoogleError(502, undefined, 'Bad Gateway')).toEqual({ message: 'Bad Gateway' });
  });

  it('builds Gemini API URLs under models/ unless the name already names a collection', () => {
    expect(geminiUrl('https://generativelanguage.googleapis.com', 'gemini-2.5-flash', 'generateContent')).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(geminiUrl('http://h/', 'tunedModels/my-tune', 'streamGenerateContent')).toBe(
      'http://h/v1beta/tunedModels/my-tune:streamGenerateContent?alt=sse',
    );
  });
});
