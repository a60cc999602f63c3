// Pure translation between the unified chat format and Bedrock Converse, and event-stream decoding: no I/O.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { fromConverseResponse, toConverseRequest } from '../../src/providers/bedrock/chat.ts';
import { bedrockUrl } from '../../src/providers/bedrock/signing.ts';
import { createFrameReader, createStreamTranslator, decodeFrame } from '../../src/providers/bedrock/stream.ts';
import { ProviderError } from '../../src/providers/errors.ts';
import type { NetworkConfig } from '../../src/providers/types.ts';
import { ChatRequest } from '../../src/schemas/chat.ts';

const req = (body: Record<string, unknown>): ChatRequest => ChatRequest.parse({ model: 'm', ...body });
const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(type: 'event' | 'exception', name: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: type },
      [type === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: name },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

describe('unified chat -> Converse', () => {
  it('builds system, alternating turns, toolUse/toolResult and inferenceConfig', () => {
    const out = toConverseRequest(
      req({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: 'Hi' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } }] },
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          { role: 'tool', tool_call_id: 't1', content: 'done' },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'required',
        max_completion_tokens: 300,
        temperature: 0.5,
        top_p: 0.8,
        stop: ['###'],
      }),
    );
    expect(out).toEqual({
      system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }],
      messages: [
        { role: 'user', content: [{ text: 'Hi' }, { image: { format: 'webp', source: { bytes: 'UklGRg==' } } }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: { x: 1 } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'done' }] } }] },
      ],
      inferenceConfig: { maxTokens: 300, temperature: 0.5, topP: 0.8, stopSequences: ['###'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }],
        toolChoice: { any: {} },
      },
    });
  });

  it('maps tool_choice, dropping tools for "none" unless the history needs them', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const messages = [{ role: 'user', content: 'x' }];
    const tc = (choice: unknown) => toConverseRequest(req({ messages, tools, tool_choice: choice })).toolConfig;
    expect(tc('auto')?.toolChoice).toEqual({ auto: {} });
    expect(tc({ type: 'function', function: { name: 'f' } })?.toolChoice).toEqual({ tool: { name: 'f' } });
    expect(tc(undefined)).toEqual({
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
    });
    expect(tc('none')).toBeUndefined();
    const withHistory = toConverseRequest(
      req({
        tools,
        tool_choice: 'none',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'a', content: 'r' },
        ],
      }),
    );
    expect(withHistory.toolConfig?.tools).toHaveLength(1);
    expect(withHistory.toolConfig?.toolChoice).toBeUndefined();
  });

  it('asks for structured output with outputConfig.textFormat and a JSON-string schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const out = toConverseRequest(
      req({
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'r', schema } },
      }),
    );
    expect(out.outputConfig).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'r' } } },
    });
  });

  it('rejects http image URLs (Converse needs bytes) and other inputs it cannot carry', () => {
    const bad = [
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }],
      [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'mp3' } }] }],
    ];
    for (const messages of bad) {
      let err: unknown;
      try {
        toConverseRequest(req({ messages }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ kind: 'invalid_request', status: 400 });
    }
  });

  it('defaults to the regional endpoint and encodes model ids in the path', () => {
    const network: NetworkConfig = {
      timeout_ms: 1,
      extra_headers: {},
      max_retries: 0,
      retry_backoff_initial_ms: 0,
      retry_backoff_max_ms: 0,
      max_response_bytes: 1024,
    };
    const key = {
      id: 'k',
      name: 'k',
      value: '',
      models: [],
      weight: 1,
      aliases: { claude: 'arn:aws:bedrock:eu-west-1:1:inference-profile/eu.anthropic.claude' },
      bedrock_key_config: { access_key: 'a', secret_key: 's', region: 'eu-west-1' },
    };
    expect(bedrockUrl({ network, key, model: 'claude' }, 'converse')).toBe(
      'https://bedrock-runtime.eu-west-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A1%3Ainference-profile%2Feu.anthropic.claude/converse',
    );
    expect(
      bedrockUrl(
        { network: { ...network, base_url: 'http://proxy/x' }, key, model: 'amazon.nova-pro-v1:0' },
        'converse-stream',
      ),
    ).toBe('http://proxy/x/model/amazon.nova-pro-v1%3A0/converse-stream');
  });
});

describe('Converse response -> unified chat', () => {
  it('maps text, reasoning, tool use, stop reasons and cache usage', () => {
    const res = fromConverseResponse(
      {
        output: {
          message: {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'think', signature: 's' } } },
              { text: 'Let me check.' },
              { toolUse: { toolUseId: 'tu1', name: 'f', input: { q: 'x' } } },
            ],
          },
        },
        stopReason: 'tool_use',
        usage: {
          inputTokens: 4,
          outputTokens: 6,
          totalTokens: 40,
          cacheReadInputTokens: 20,
          cacheWriteInputTokens: 10,
        },
      },
      { id: 'chatcmpl-1', model: 'claude', created: 5 },
    );
    expect(res.choices[0]).toEqual({
      index: 0,
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: 'Let me check.',
        reasoning_content: 'think',
        tool_calls: [{ id: 'tu1', type: 'function', function: { name: 'f', arguments: '{"q":"x"}' } }],
      },
    });
    expect(res.usage).toEqual({
      prompt_tokens: 34,
      completion_tokens: 6,
      total_tokens: 40,
      prompt_tokens_details: { cached_tokens: 20, cache_creation_tokens: 10 },
    });
    const finish = (stopReason: string) =>
      fromConverseResponse(
        { output: { message: { role: 'assistant', content: [] } }, stopReason },
        { id: '', model: '', created: 0 },
      ).choices[0]?.finish_reason;
    expect(['end_turn', 'stop_sequence', 'max_tokens', 'guardrail_intervened', 'content_filtered'].map(finish)).toEqual(
      ['stop', 'stop', 'length', 'content_filter', 'content_filter'],
    );
  });
});

describe('ConverseStream decoding', () => {
  const frames = [
    frame('event', 'messageStart', { role: 'assistant', p: 'abc' }),
    frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } }),
    frame('event', 'contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hi ' } }),
    frame('event', 'contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu', name: 'f' } } }),
    frame('event', 'contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"a"' } } }),
    frame('event', 'contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: ':2}' } } }),
    frame('event', 'contentBlockStop', { contentBlockIndex: 2 }),
    frame('event', 'messageStop', { stopReason: 'tool_use' }),
    frame('event', 'metadata', {
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
      metrics: { latencyMs: 1 },
    }),
  ];
  const all = Uint8Array.from(frames.flatMap((f) => [...f]));

  it('reassembles frames split anywhere and holds back only the unfinished tail', () => {
    for (const size of [1, 7, 50, all.length]) {
      const reader = createFrameReader();
      const out: Uint8Array[] = [];
      for (let i = 0; i < all.length; i += size) {
        out.push(...reader.push(all.subarray(i, i + size)));
        expect(reader.buffered).toBeLessThan(Math.max(...frames.map((f) => f.length)));
      }
      expect(out.map((f) => decodeFrame(f).name)).toEqual([
        'messageStart',
        'contentBlockDelta',
        'contentBlockDelta',
        'contentBlockStart',
        'contentBlockDelta',
        'contentBlockDelta',
        'contentBlockStop',
        'messageStop',
        'metadata',
      ]);
      expect(reader.buffered).toBe(0);
    }
  });

  it('turns events into role, reasoning, text, indexed tool deltas, finish and usage chunks', () => {
    const t = createStreamTranslator({ id: 'c1', model: 'claude', created: 1, includeUsage: true });
    const chunks = frames.flatMap((f) => t.push(decodeFrame(f)));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'hmm' },
      { content: 'Hi ' },
      { tool_calls: [{ index: 0, id: 'tu', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ':2}' } }] },
      {},
      null,
    ]);
    expect(chunks[6]?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks[7]).toMatchObject({
      id: 'c1',
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
    const quiet = createStreamTranslator({ id: 'c1', model: 'claude', created: 1, includeUsage: false });
    expect(frames.flatMap((f) => quiet.push(decodeFrame(f))).some((c) => c.choices.length === 0)).toBe(false);
  });

  it('throws exception events as ProviderErrors with the matching status', () => {
    const t = createStreamTranslator({ id: 'c', model: 'm', created: 1, includeUsage: false });
    const cases: [string, number, string][] = [
      ['throttlingException', 429, 'ThrottlingException'],
      ['validationException', 400, 'ValidationException'],
      ['modelStreamErrorException', 424, 'ModelStreamErrorException'],
      ['serviceUnavailableException', 503, 'ServiceUnavailableException'],
    ];
    for (const [name, status, type] of cases) {
      expect(() => t.push(decodeFrame(frame('exception', name, { message: 'nope' })))).toThrow(
        expect.objectContaining({ kind: 'upstream', status, type, message: 'nope' }),
      );
    }
  });

  it('rejects a corrupt frame as bad_response', () => {
    const broken = frame('event', 'messageStart', { role: 'assistant' });
    broken[broken.length - 1] = (broken.at(-1) ?? 0) ^ 0xff;
    expect(() => decodeFrame(broken)).toThrow(expect.objectContaining({ kind: 'bad_response' }));
  });
});
