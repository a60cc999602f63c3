// Pure translation of unified (OpenAI) chat requests into Gemini's generateContent body.
import { describe, expect, it } from 'vitest';
import {
  SKIP_THOUGHT_SIGNATURE,
  toGeminiToolConfig,
  toGenerateContentRequest,
} from '../../src/providers/gemini/request.ts';
import { ChatRequest } from '../../src/schemas/chat.ts';
import { thrown } from './helpers.ts';

const req = (body: Record<string, unknown>): ChatRequest =>
  ChatRequest.parse({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], ...body });

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather now',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false },
  },
};

describe('chat request', () => {
  it('puts system and developer messages in systemInstruction and maps roles to user/model', () => {
    const body = toGenerateContentRequest(
      req({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'use French' }] },
          { role: 'user', content: 'bonjour' },
          { role: 'assistant', content: 'salut' },
          { role: 'user', content: 'ça va ?' },
        ],
      }),
      'gemini-2.5-flash',
    );
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'be brief' }, { text: 'use French' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'bonjour' }] },
      { role: 'model', parts: [{ text: 'salut' }] },
      { role: 'user', parts: [{ text: 'ça va ?' }] },
    ]);
    expect(body.generationConfig).toBeUndefined();
  });

  it('sends data: images inline and URLs by reference, audio inline', () => {
    const body = toGenerateContentRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=2' } },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            ],
          },
        ],
      }),
      'gemini-2.5-flash',
    );
    expect(body.contents[0]?.parts).toEqual([
      { text: 'what is this?' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
    ]);
  });

  it('rejects data: URLs that are not base64', () => {
    const err = thrown(() =>
      toGenerateContentRequest(
        req({
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain,hi' } }] }],
        }),
        'gemini-2.5-flash',
      ),
    );
    expect(err.kind).toBe('invalid_request');
  });

  it('declares tools with their JSON schema and omits an empty parameter object', () => {
    const noArgs = { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } };
    const body = toGenerateContentRequest(
      req({ tools: [weather, noArgs], tool_choice: 'required' }),
      'gemini-2.5-flash',
    );
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather now', parametersJsonSchema: weather.function.parameters },
          { name: 'now' },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
  });

  it.each([
    ['none', { mode: 'NONE' }],
    ['auto', { mode: 'AUTO' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'get_weather' } },
      { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    ],
  ] as const)('maps tool_choice %j', (choice, expected) => {
    expect(toGeminiToolConfig(choice)).toEqual({ functionCallingConfig: expected });
  });

  it('turns tool calls into functionCall parts and tool results into functionResponse parts named by call id', () => {
    const body = toGenerateContentRequest(
      req({
        messages: [
          { role: 'user', content: 'weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_a',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                extra_content: { google: { thought_signature: 'c2lnLTE=' } },
              },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_b', content: '10:00' },
        ],
      }),
      'gemini-2.5-flash',
    );
    expect(body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' },
        { functionCall: { id: 'call_b', name: 'get_time', args: { city: 'Rome' } } },
      ],
    });
    expect(body.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'call_a', name: 'get_weather', response: { temp: 21 } } },
        { functionResponse: { id: 'call_b', name: 'get_time', response: { output: '10:00' } } },
      ],
    });
    expect(body.contents).toHaveLength(3);
  });

  it('adds the documented placeholder signature when a function call history has none', () => {
    const body = toGenerateContentRequest(
      req({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
      }),
      'gemini-3-pro-preview',
    );
    expect(body.contents[1]?.parts[0]).toEqual({
      functionCall: { id: 'c1', name: 'f', args: {} },
      thoughtSignature: SKIP_THOUGHT_SIGNATURE,
    });
  });

  it('rejects a tool result for a call nobody made, and arguments that are not JSON', () => {
    expect(
      thrown(() =>
        toGenerateContentRequest(
          req({
            messages: [
              { role: 'user', content: 'x' },
              { role: 'tool', tool_call_id: 'ghost', content: 'ok' },
            ],
          }),
          'm',
        ),
      ).message,
    ).toContain('ghost');
    const badArgs = req({
      messages: [
        { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
      ],
    });
    expect(thrown(() => toGenerateContentRequest(badArgs, 'm')).kind).toBe('invalid_request');
  });

  it('maps sampling parameters into generationConfig', () => {
    const body = toGenerateContentRequest(
      req({
        max_tokens: 50,
        max_completion_tokens: 70,
        temperature: 0.3,
        top_p: 0.9,
        top_k: 40,
        stop: 'END',
        n: 2,
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: 0.2,
      }),
      'gemini-2.5-flash',
    );
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 70,
      temperature: 0.3,
      topP: 0.9,
      topK: 40,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.2,
    });
  });

  it('asks for JSON output, with the caller schema as responseJsonSchema', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const json = toGenerateContentRequest(req({ response_format: { type: 'json_object' } }), 'm');
    expect(json.generationConfig).toEqual({ responseMimeType: 'application/json' });
    const typed = toGenerateContentRequest(
      req({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }),
      'm',
    );
    expect(typed.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('maps reasoning_effort to a thinking budget (2.5) or a thinking level (3)', () => {
    expect(
      toGenerateContentRequest(req({ reasoning_effort: 'low' }), 'gemini-2.5-pro').generationConfig?.thinkingConfig,
    ).toEqual({
      includeThoughts: true,
      thinkingBudget: 1024,
    });
    expect(
      toGenerateContentRequest(req({ reasoning_effort: 'none' }), 'gemini-2.5-flash').generationConfig?.thinkingConfig,
    ).toEqual({
      thinkingBudget: 0,
    });
    expect(
      toGenerateContentRequest(req({ reasoning_effort: 'high' }), 'gemini-3-pro-preview').generationConfig
        ?.thinkingConfig,
    ).toEqual({
      includeThoughts: true,
      thinkingLevel: 'high',
    });
  });
});
