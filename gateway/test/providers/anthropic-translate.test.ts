// Pure translation between the unified chat format and Anthropic Messages: no I/O.
import { describe, expect, it } from 'vitest';
import { fromMessagesResponse, toMessagesRequest } from '../../src/providers/anthropic/chat.ts';
import { createStreamTranslator } from '../../src/providers/anthropic/stream.ts';
import type { StreamEvent } from '../../src/providers/anthropic/types.ts';
import { ProviderError } from '../../src/providers/errors.ts';
import { ChatRequest } from '../../src/schemas/chat.ts';

const req = (body: Record<string, unknown>): ChatRequest => ChatRequest.parse({ model: 'claude', ...body });

describe('unified chat -> Anthropic Messages', () => {
  it('moves system and developer turns to `system`, merges repeated roles, and maps tool history', () => {
    const out = toMessagesRequest(
      req({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric.', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: 'Hi' },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
          { role: 'user', content: 'Thanks' },
        ],
      }),
      'claude-sonnet-4-5',
      false,
    );
    expect(out.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use metric.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(out.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Weather in Paris and Rome?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
    expect(out.model).toBe('claude-sonnet-4-5');
  });

  it('maps data: images to base64 sources and http(s) images to url sources', () => {
    const out = toMessagesRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      }),
      'm',
      false,
    );
    expect(out.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('rejects inputs Anthropic cannot take with invalid_request', () => {
    const bad = [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] },
      {
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }] }],
      },
      {
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      },
      { messages: [{ role: 'user', content: 'x' }], n: 2 },
    ];
    for (const body of bad) {
      const err = catchError(() => toMessagesRequest(req(body), 'm', false));
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ kind: 'invalid_request', status: 400 });
    }
  });

  it('maps tools, tool_choice and parallel_tool_calls', () => {
    const tools = [
      { type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } },
    ];
    const base = { messages: [{ role: 'user', content: 'x' }], tools };
    const choice = (extra: Record<string, unknown>) =>
      toMessagesRequest(req({ ...base, ...extra }), 'm', false).tool_choice;
    expect(toMessagesRequest(req(base), 'm', false).tools).toEqual([
      { name: 'f', description: 'does f', input_schema: { type: 'object' } },
    ]);
    expect(choice({})).toBeUndefined();
    expect(choice({ tool_choice: 'auto' })).toEqual({ type: 'auto' });
    expect(choice({ tool_choice: 'required' })).toEqual({ type: 'any' });
    expect(choice({ tool_choice: 'none' })).toEqual({ type: 'none' });
    expect(choice({ tool_choice: { type: 'function', function: { name: 'f' } } })).toEqual({ type: 'tool', name: 'f' });
    expect(choice({ parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('maps max tokens, stop, sampling, user, structured output and reasoning effort', () => {
    const messages = [{ role: 'user', content: 'x' }];
    expect(toMessagesRequest(req({ messages }), 'm', false).max_tokens).toBe(4096);
    expect(toMessagesRequest(req({ messages, max_tokens: 50 }), 'm', false).max_tokens).toBe(50);
    expect(toMessagesRequest(req({ messages, max_tokens: 50, max_completion_tokens: 70 }), 'm', false).max_tokens).toBe(
      70,
    );

    const out = toMessagesRequest(
      req({
        messages,
        stop: 'END',
        temperature: 0.2,
        top_p: 0.9,
        user: 'u-1',
        response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' } } },
      }),
      'm',
      true,
    );
    expect(out).toMatchObject({
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      metadata: { user_id: 'u-1' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      stream: true,
    });

    const thinking = toMessagesRequest(req({ messages, reasoning_effort: 'medium' }), 'm', false);
    expect(thinking.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(thinking.max_tokens).toBeGreaterThan(4096);
    // A caller's max_tokens is kept; the budget shrinks to fit under it, or thinking stays off.
    const fitted = toMessagesRequest(req({ messages, reasoning_effort: 'high', max_tokens: 3000 }), 'm', false);
    expect(fitted).toMatchObject({ max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2999 } });
    expect(
      toMessagesRequest(req({ messages, reasoning_effort: 'low', max_tokens: 500 }), 'm', false).thinking,
    ).toBeUndefined();
  });
});

describe('Anthropic Messages response -> unified chat', () => {
  it('joins text, exposes thinking as reasoning_content, and maps tool_use to tool_calls', () => {
    const res = fromMessagesResponse(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 5 },
      },
      1700000000,
    );
    expect(res).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'claude-x',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Checking.',
            reasoning_content: 'hmm',
            tool_calls: [
              { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });

  it('maps stop reasons and counts cached prompt tokens into prompt_tokens', () => {
    const base = { id: 'm', type: 'message' as const, role: 'assistant' as const, model: 'c', content: [] };
    const finish = (stop_reason: string) =>
      fromMessagesResponse({ ...base, stop_reason, usage: {} }).choices[0]?.finish_reason;
    expect(finish('end_turn')).toBe('stop');
    expect(finish('stop_sequence')).toBe('stop');
    expect(finish('max_tokens')).toBe('length');
    expect(finish('tool_use')).toBe('tool_calls');
    expect(finish('refusal')).toBe('content_filter');

    const usage = fromMessagesResponse({
      ...base,
      stop_reason: 'end_turn',
      usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
    }).usage;
    expect(usage).toEqual({
      prompt_tokens: 125,
      completion_tokens: 7,
      total_tokens: 132,
      prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 20 },
    });
  });
});

describe('Anthropic stream events -> chat chunks', () => {
  const events: StreamEvent[] = [
    {
      type: 'message_start',
      message: {
        id: 'msg_s',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 3 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'plan' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'ping' },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_9', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];

  it('emits role, reasoning, text, indexed tool-call deltas, finish reason and a final usage chunk', () => {
    const t = createStreamTranslator({ model: 'claude-x', includeUsage: true, created: 1 });
    const chunks = events.flatMap((e) => t.push(e));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'plan' },
      { content: 'Hi' },
      { tool_calls: [{ index: 0, id: 'toolu_9', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      {},
      null,
    ]);
    expect(chunks[6]?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.every((c) => c.id === 'msg_s' && c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[7]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 15, completion_tokens: 9, total_tokens: 24, prompt_tokens_details: { cached_tokens: 3 } },
    });
    expect(t.finished).toBe(true);
  });

  it('sends no usage chunk unless asked, and throws a retryable ProviderError on an error event', () => {
    const t = createStreamTranslator({ model: 'claude-x', includeUsage: false });
    const chunks = events.flatMap((e) => t.push(e));
    expect(chunks.some((c) => c.choices.length === 0)).toBe(false);

    const err = catchError(() => t.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'upstream', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    // toBeInstanceOf(ProviderError) was asserted above.
    expect((err as ProviderError).retryable).toBe(true);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
