// Unified chat answer -> Anthropic Message, usage both ways, and the stream translation event by event.
import { describe, expect, it } from 'vitest';
import { fromAnthropicUsage, toAnthropicUsage, toMessage } from '../../../src/formats/anthropic/from-chat.ts';
import { ChatToMessagesStream } from '../../../src/formats/anthropic/stream-from-chat.ts';
import type { ChatChunk, ChatChunkChoice } from '../../../src/schemas/chat.ts';

describe('toMessage', () => {
  it('builds thinking, text and tool_use blocks, the stop reason and Anthropic usage', () => {
    const m = toMessage({
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'ok',
            reasoning_content: 'why',
            tool_calls: [
              { id: 't1', type: 'function', function: { name: 'w', arguments: '{"a":1}' } },
              { id: 't2', type: 'function', function: { name: 'w', arguments: 'not json' } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 8 } },
    });
    expect(m).toEqual({
      id: 'c1',
      type: 'message',
      role: 'assistant',
      model: 'gpt',
      content: [
        { type: 'thinking', thinking: 'why', signature: '' },
        { type: 'text', text: 'ok' },
        { type: 'tool_use', id: 't1', name: 'w', input: { a: 1 } },
        { type: 'tool_use', id: 't2', name: 'w', input: { arguments: 'not json' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 8, cache_creation_input_tokens: 0 },
    });
  });

  it('maps finish reasons', () => {
    const of = (finish: ChatChunkChoice['finish_reason']) =>
      toMessage({
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: 'x' } }],
      })['stop_reason'];
    expect([of('stop'), of('length'), of('content_filter'), of(null)]).toEqual([
      'end_turn',
      'max_tokens',
      'refusal',
      'end_turn',
    ]);
  });
});

describe('usage', () => {
  it('unified prompt tokens count cache reads and writes; Anthropic input_tokens does not', () => {
    const u = fromAnthropicUsage({
      input_tokens: 3,
      output_tokens: 2,
      cache_read_input_tokens: 10,
      cache_creation_input_tokens: 5,
    });
    expect(u).toEqual({
      prompt_tokens: 18,
      completion_tokens: 2,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 5 },
    });
    expect(toAnthropicUsage(u)).toEqual({
      input_tokens: 3,
      output_tokens: 2,
      cache_read_input_tokens: 10,
      cache_creation_input_tokens: 5,
    });
    expect(fromAnthropicUsage({ input_tokens: 4, output_tokens: 1 })).toEqual({
      prompt_tokens: 4,
      completion_tokens: 1,
      total_tokens: 5,
    });
    expect(toAnthropicUsage(undefined)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
    });
  });
});

function chunk(delta: ChatChunkChoice['delta'], finish: ChatChunkChoice['finish_reason'] = null): ChatChunk {
  return {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

describe('ChatToMessagesStream', () => {
  it('opens, fills and closes blocks in order, holds the stop reason until the usage arrived', () => {
    const t = new ChatToMessagesStream('gpt', 'msg_fallback');
    const events = [
      ...t.push(chunk({ role: 'assistant', content: '' })),
      ...t.push(chunk({ reasoning_content: 'hm' })),
      ...t.push(chunk({ content: 'Hel' })),
      ...t.push(chunk({ content: 'lo' })),
      ...t.push(
        chunk({ tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'w', arguments: '' } }] }),
      ),
      ...t.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] })),
      ...t.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] })),
      ...t.push(chunk({}, 'tool_calls')),
      ...t.push({ ...chunk({}), choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }),
      ...t.end(),
    ];
    expect(events.map((e) => [e.event, e.data['index'] ?? null])).toEqual([
      ['message_start', null],
      ['ping', null],
      ['content_block_start', 0],
      ['content_block_delta', 0],
      ['content_block_stop', 0],
      ['content_block_start', 1],
      ['content_block_delta', 1],
      ['content_block_delta', 1],
      ['content_block_stop', 1],
      ['content_block_start', 2],
      ['content_block_delta', 2],
      ['content_block_delta', 2],
      ['content_block_stop', 2],
      ['message_delta', null],
      ['message_stop', null],
    ]);
    expect(events[0]?.data['message']).toMatchObject({ id: 'c1', model: 'gpt', role: 'assistant', content: [] });
    expect(events[2]?.data['content_block']).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(events[9]?.data['content_block']).toEqual({ type: 'tool_use', id: 't1', name: 'w', input: {} });
    expect(events[10]?.data['delta']).toEqual({ type: 'input_json_delta', partial_json: '{"a":' });
    expect(events[13]?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: null, cache_creation_input_tokens: null },
    });
  });

  it('an empty stream still opens and closes the message', () => {
    const t = new ChatToMessagesStream('gpt', 'msg_fallback');
    const events = t.end();
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(events[0]?.data['message']).toMatchObject({ id: 'msg_fallback', model: 'gpt' });
  });
});
