// The Bedrock runtime format's pure pieces: Converse request -> unified chat request, unified answer and stream ->
// Converse response and events, the request schema's one-member rules, the event-stream framing, and InvokeModel
// usage readers.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { eventFrame, exceptionFrame, streamExceptionName } from '../../../src/formats/converse/event-stream.ts';
import { fromChatResponse, fromTokenUsage, toolInput, toTokenUsage } from '../../../src/formats/converse/from-chat.ts';
import { invokeStreamUsage, invokeUsage } from '../../../src/formats/converse/invoke-usage.ts';
import { ConverseRequest, CountTokensRequest } from '../../../src/formats/converse/schema.ts';
import { createConverseStreamBuilder } from '../../../src/formats/converse/stream-from-chat.ts';
import { toChatRequest, toCountTokensRequest } from '../../../src/formats/converse/to-chat.ts';
import { toEnvelope } from '../../../src/http/errors.ts';
import { ProviderError } from '../../../src/providers/errors.ts';
import type { ChatChunk, ChatResponse } from '../../../src/schemas/chat.ts';

const PNG = 'iVBORw0KGgo=';
const user = (text: string) => ({ role: 'user' as const, content: [{ text }] });

function parse(body: unknown): ConverseRequest {
  return ConverseRequest.parse(body);
}

describe('Converse request -> unified chat request', () => {
  it('maps system, inferenceConfig, images, documents and guard content', () => {
    const chat = toChatRequest(
      parse({
        system: [{ text: 'Be terse.' }, { cachePoint: { type: 'default' } }, { guardContent: { text: { text: 'G' } } }],
        messages: [
          {
            role: 'user',
            content: [
              { text: 'look' },
              { image: { format: 'png', source: { bytes: PNG } } },
              { document: { format: 'pdf', name: 'report', source: { bytes: PNG } } },
              { document: { format: 'txt', name: 'notes', source: { text: 'plain notes' } } },
              { guardContent: { text: { text: 'guarded', qualifiers: ['query'] } } },
              { cachePoint: { type: 'default' } },
            ],
          },
        ],
        inferenceConfig: { maxTokens: 10, temperature: 0.2, topP: 0.5, stopSequences: ['X'] },
      }),
      'gpt-4o-mini',
      false,
    );
    expect(chat).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 10, temperature: 0.2, top_p: 0.5, stop: ['X'] });
    expect(chat.messages[0]).toEqual({ role: 'system', content: 'Be terse.\nG' });
    expect(chat.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'file', file: { file_data: `data:application/pdf;base64,${PNG}`, filename: 'report.pdf' } },
        { type: 'text', text: 'plain notes' },
        { type: 'text', text: 'guarded' },
      ],
    });
    expect(chat.stream).toBeUndefined();
  });

  it('maps tools, each toolChoice, toolUse turns with reasoning, and tool results before the user text', () => {
    const tools = [{ toolSpec: { name: 'f', description: 'd', inputSchema: { json: { type: 'object' } } } }];
    const base = {
      messages: [
        user('q'),
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'hmm', signature: 's' } } },
            { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 't1', content: [{ json: { ok: true } }, { text: '!' }] } },
            { toolResult: { toolUseId: 't2', content: [{ text: 'bad' }], status: 'error' } },
            { text: 'and then?' },
          ],
        },
      ],
    };
    const choices: [unknown, unknown][] = [
      [{ auto: {} }, 'auto'],
      [{ any: {} }, 'required'],
      [{ tool: { name: 'f' } }, { type: 'function', function: { name: 'f' } }],
    ];
    for (const [toolChoice, expected] of choices) {
      const chat = toChatRequest(parse({ ...base, toolConfig: { tools, toolChoice } }), 'm', true);
      expect(chat.tool_choice).toEqual(expected);
      expect(chat.tools).toEqual([
        { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } },
      ]);
      expect(chat.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'hmm',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: '{"ok":true}!' },
        { role: 'tool', tool_call_id: 't2', content: 'Error: bad' },
        { role: 'user', content: [{ type: 'text', text: 'and then?' }] },
      ]);
      expect(chat.stream_options).toEqual({ include_usage: true });
    }
  });

  it('refuses what cannot be translated with a 400 naming the block', () => {
    const s3 = parse({
      messages: [
        { role: 'user', content: [{ image: { format: 'png', source: { s3Location: { uri: 's3://b/k' } } } }] },
      ],
    });
    expect(() => toChatRequest(s3, 'm', false)).toThrow(ProviderError);
    expect(() => toChatRequest(s3, 'm', false)).toThrow(/messages\[0\]\.content\[0\]\.image\.source/);
    const unknown = parse({ messages: [{ role: 'user', content: [{ video: { format: 'mp4' } }] }] });
    expect(() => toChatRequest(unknown, 'm', false)).toThrow(/content block video cannot be translated/);
    expect(() => toChatRequest(parse({}), 'm', false)).toThrow(/messages/);
  });

  it('count tokens keeps the conversation and tools', () => {
    const body = CountTokensRequest.parse({
      input: {
        converse: {
          messages: [user('count')],
          toolConfig: { tools: [{ toolSpec: { name: 'f', inputSchema: { json: {} } } }] },
        },
      },
    });
    const converse = body.input.converse;
    if (!converse) throw new Error('no converse input');
    expect(toCountTokensRequest(converse, 'm')).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'count' }] }],
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
    });
  });
});

describe('the request schema', () => {
  const tools = [{ toolSpec: { name: 'f', inputSchema: { json: {} } } }];
  it('toolChoice sets exactly one of auto, any, tool', () => {
    for (const toolChoice of [{}, { auto: {}, any: {} }, { auto: {}, other: {} }, { none: {} }]) {
      const r = ConverseRequest.safeParse({ messages: [user('x')], toolConfig: { tools, toolChoice } });
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.path).toEqual(['toolConfig', 'toolChoice']);
    }
    expect(
      ConverseRequest.safeParse({ messages: [user('x')], toolConfig: { tools, toolChoice: { any: {} } } }).success,
    ).toBe(true);
  });

  it('a content block, system block and tool set exactly one member; unknown members pass', () => {
    const bad = [
      { messages: [{ role: 'user', content: [{}] }] },
      { messages: [{ role: 'user', content: [{ text: 'a', cachePoint: { type: 'default' } }] }] },
      { messages: [user('x')], system: [{ text: 'a', guardContent: { text: { text: 'b' } } }] },
      { messages: [user('x')], toolConfig: { tools: [{}] } },
      { messages: [user('x')], toolConfig: { tools: [{ toolSpec: { name: 'bad name', inputSchema: { json: {} } } }] } },
    ];
    for (const body of bad) expect(ConverseRequest.safeParse(body).success).toBe(false);
    const future = { messages: [{ role: 'user', content: [{ citationsContent: { x: 1 } }] }], futureTop: 1 };
    expect(ConverseRequest.parse(future)).toEqual(future);
  });
});

const answer = (
  message: ChatResponse['choices'][number]['message'],
  finish: ChatResponse['choices'][number]['finish_reason'],
): ChatResponse => ({
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message, finish_reason: finish }],
  usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 8 } },
});

describe('unified answer -> Converse response', () => {
  it('carries reasoning, text, tool calls, stop reason, usage with cache reads, and latency', () => {
    const res = fromChatResponse(
      answer(
        {
          role: 'assistant',
          content: 'hi',
          reasoning_content: 'why',
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        'tool_calls',
      ),
      41.6,
    );
    expect(res).toEqual({
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'why' } } },
            { text: 'hi' },
            { toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 12, outputTokens: 5, totalTokens: 25, cacheReadInputTokens: 8, cacheWriteInputTokens: 0 },
      metrics: { latencyMs: 42 },
    });
  });

  it('maps every finish reason', () => {
    const stops = {
      stop: 'end_turn',
      length: 'max_tokens',
      content_filter: 'content_filtered',
      tool_calls: 'tool_use',
    } as const;
    for (const [finish, stop] of Object.entries(stops)) {
      const f = finish as keyof typeof stops;
      expect(fromChatResponse(answer({ role: 'assistant', content: 'x' }, f), 0)['stopReason']).toBe(stop);
    }
  });

  it('tool arguments that are not a JSON object are kept as text', () => {
    expect(toolInput('{"cut": ')).toEqual({ arguments: '{"cut": ' });
    expect(toolInput('[1]')).toEqual({ arguments: '[1]' });
    expect(toolInput('')).toEqual({});
  });

  it('usage round-trips between the shapes', () => {
    const unified = fromTokenUsage({
      inputTokens: 3,
      outputTokens: 2,
      cacheReadInputTokens: 10,
      cacheWriteInputTokens: 5,
    });
    expect(unified).toEqual({
      prompt_tokens: 18,
      completion_tokens: 2,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 5 },
    });
    expect(toTokenUsage(unified)).toEqual({
      inputTokens: 3,
      outputTokens: 2,
      totalTokens: 20,
      cacheReadInputTokens: 10,
      cacheWriteInputTokens: 5,
    });
    expect(fromTokenUsage('nope')).toBeUndefined();
  });
});

function chunk(
  delta: ChatChunk['choices'][number]['delta'],
  finish: ChatChunk['choices'][number]['finish_reason'] = null,
  usage?: ChatChunk['usage'],
): ChatChunk {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  };
}

describe('unified stream -> ConverseStream events', () => {
  it('numbers blocks, opens tool blocks, stops, and sends usage last', () => {
    let t = 100;
    const b = createConverseStreamBuilder(() => t);
    const events = [
      ...b.push(chunk({ role: 'assistant', reasoning_content: 'r' })),
      ...b.push(chunk({ content: 'Hel' })),
      ...b.push(chunk({ content: 'lo' })),
      ...b.push(chunk({ tool_calls: [{ index: 0, id: 't1', function: { name: 'f', arguments: '{"a"' } }] })),
      ...b.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })),
      ...b.push(chunk({}, 'tool_calls')),
      ...b.push({ ...chunk({}), choices: [], usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } }),
    ];
    t = 130;
    events.push(...b.end());
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'r' } } }],
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hel' } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'lo' } }],
      ['contentBlockStop', { contentBlockIndex: 1 }],
      ['contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 't1', name: 'f' } } }],
      ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"a"' } } }],
      ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: ':1}' } } }],
      ['contentBlockStop', { contentBlockIndex: 2 }],
      ['messageStop', { stopReason: 'tool_use' }],
      ['metadata', { usage: { inputTokens: 4, outputTokens: 3, totalTokens: 7 }, metrics: { latencyMs: 30 } }],
    ]);
  });

  it('closes a stream the upstream ended without a finish reason', () => {
    const b = createConverseStreamBuilder(() => 0);
    b.push(chunk({ content: 'x' }));
    expect(b.end().map((e) => e.event)).toEqual(['contentBlockStop', 'messageStop', 'metadata']);
  });
});

describe('event-stream framing', () => {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  it('encodes an event the SDK codec decodes, headers and payload', () => {
    const msg = codec.decode(eventFrame('messageStop', { stopReason: 'end_turn' }));
    expect(msg.headers[':message-type']?.value).toBe('event');
    expect(msg.headers[':event-type']?.value).toBe('messageStop');
    expect(JSON.parse(toUtf8(msg.body))).toEqual({ stopReason: 'end_turn' });
  });

  it('encodes a failure as the exception the SDK throws', () => {
    const env = toEnvelope(new ProviderError('upstream', 'slow', { status: 429, type: 'ThrottlingException' }), 'ev');
    const msg = codec.decode(exceptionFrame(env));
    expect(msg.headers[':message-type']?.value).toBe('exception');
    expect(msg.headers[':exception-type']?.value).toBe('throttlingException');
    expect(JSON.parse(toUtf8(msg.body))).toEqual({ message: 'slow' });
    expect(streamExceptionName(424, 'ModelStreamErrorException')).toBe('modelStreamErrorException');
    expect(streamExceptionName(502, 'upstream_error')).toBe('modelStreamErrorException');
    expect(streamExceptionName(400, 'invalid_request_error')).toBe('validationException');
    expect(streamExceptionName(503, 'x')).toBe('serviceUnavailableException');
  });
});

describe('InvokeModel usage', () => {
  it('reads each family’s own counts', () => {
    expect(invokeUsage({ usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 4 } })).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 2,
    });
    expect(invokeUsage({ usage: { inputTokens: 5, outputTokens: 1 } })).toMatchObject({ prompt_tokens: 5 });
    expect(invokeUsage({ prompt_token_count: 9, generation_token_count: 4 })).toMatchObject({ total_tokens: 13 });
    expect(invokeUsage({ inputTextTokenCount: 6, results: [{ tokenCount: 2 }, { tokenCount: 1 }] })).toMatchObject({
      completion_tokens: 3,
    });
    expect(invokeUsage({ anything: 1 })).toBeUndefined();
  });

  it('reads the invocation metrics of a streamed chunk', () => {
    const bytes = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
    const last = {
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': { inputTokenCount: 8, outputTokenCount: 2 },
    };
    expect(invokeStreamUsage({ bytes: bytes(last) })).toEqual({
      prompt_tokens: 8,
      completion_tokens: 2,
      total_tokens: 10,
    });
    expect(invokeStreamUsage({ bytes: bytes({ type: 'content_block_delta' }) })).toBeUndefined();
    expect(invokeStreamUsage({ bytes: 'not base64 json' })).toBeUndefined();
  });
});
