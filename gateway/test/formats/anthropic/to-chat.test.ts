// Anthropic Messages request -> unified chat request: every field the translation carries, and the 400s for what
// only Anthropic can run.
import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../../src/formats/anthropic/schema.ts';
import { toChatRequest, toCountTokensRequest } from '../../../src/formats/anthropic/to-chat.ts';
import { ProviderError } from '../../../src/providers/errors.ts';

const base = { model: 'openai/gpt-4o-mini', max_tokens: 50 };

function req(extra: Partial<MessagesRequest> & Record<string, unknown>): MessagesRequest {
  return { ...base, messages: [{ role: 'user', content: 'hi' }], ...extra };
}

describe('toChatRequest', () => {
  it('carries system (string and blocks), sampling, stops, user and the stream with usage', () => {
    expect(
      toChatRequest(
        req({
          system: 'terse',
          temperature: 0.5,
          top_p: 0.9,
          top_k: 3,
          stop_sequences: ['X'],
          metadata: { user_id: 'u1' },
        }),
        true,
      ),
    ).toEqual({
      ...base,
      messages: [
        { role: 'system', content: 'terse' },
        { role: 'user', content: 'hi' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: ['X'],
      user: 'u1',
      stream: true,
      stream_options: { include_usage: true },
    });
    const blocks = toChatRequest(
      req({ system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }] }),
      false,
    );
    expect(blocks.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'a' }] });
    expect(blocks.stream).toBeUndefined();
  });

  it('turns images, PDFs and text documents into content parts', () => {
    const out = toChatRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
              { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
              {
                type: 'document',
                source: { type: 'base64', media_type: 'application/pdf', data: 'BBB' },
                title: 'r.pdf',
              },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain doc' } },
            ],
          },
        ],
      }),
      false,
    );
    expect(out.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } },
          { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,BBB', filename: 'r.pdf' } },
          { type: 'text', text: 'plain doc' },
        ],
      },
    ]);
  });

  it('carries tools, tool_choice, tool_use and tool_result turns; thinking becomes reasoning', () => {
    const out = toChatRequest(
      req({
        tools: [{ name: 'w', description: 'weather', input_schema: { type: 'object' } }],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 4000 },
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'redacted_thinking', data: 'r' },
              { type: 'text', text: 'calling' },
              { type: 'tool_use', id: 't1', name: 'w', input: { city: 'P' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'sunny' }] },
              { type: 'text', text: 'and?' },
            ],
          },
        ],
      }),
      false,
    );
    expect(out.tools).toEqual([
      { type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } },
    ]);
    expect(out.tool_choice).toBe('required');
    expect(out.parallel_tool_calls).toBe(false);
    expect(out.reasoning_effort).toBe('medium');
    expect(out.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'calling',
        reasoning_content: 'hmm',
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{"city":"P"}' } }],
      },
      { role: 'tool', tool_call_id: 't1', content: 'sunny' },
      { role: 'user', content: 'and?' },
    ]);
  });

  it('maps each tool_choice and the thinking budget', () => {
    const tools = [{ name: 'w', input_schema: { type: 'object' } }];
    expect(toChatRequest(req({ tools, tool_choice: { type: 'auto' } }), false).tool_choice).toBe('auto');
    expect(toChatRequest(req({ tools, tool_choice: { type: 'none' } }), false).tool_choice).toBe('none');
    expect(toChatRequest(req({ tools, tool_choice: { type: 'tool', name: 'w' } }), false).tool_choice).toEqual({
      type: 'function',
      function: { name: 'w' },
    });
    expect(toChatRequest(req({ thinking: { type: 'enabled', budget_tokens: 1024 } }), false).reasoning_effort).toBe(
      'low',
    );
    expect(toChatRequest(req({ thinking: { type: 'enabled', budget_tokens: 20000 } }), false).reasoning_effort).toBe(
      'high',
    );
    expect(toChatRequest(req({ thinking: { type: 'disabled' } }), false).reasoning_effort).toBeUndefined();
  });

  it('carries structured output as a json_schema response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const out = toChatRequest(req({ output_config: { format: { type: 'json_schema', schema } } }), false);
    expect(out.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } });
  });

  it('refuses what only Anthropic runs, naming the field', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type'],
      [
        { messages: [{ role: 'user', content: [{ type: 'search_result', source: 's' }] }] },
        'messages[0].content[0].type',
      ],
      [
        { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] },
        'messages[0].content[0].source',
      ],
      [
        { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x' } }] }] },
        'messages[0].content[0].source',
      ],
      [
        { messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 'x' }] }] },
        'messages[0].content[0].type',
      ],
    ];
    for (const [extra, field] of cases) {
      let err: unknown;
      try {
        toChatRequest(req(extra), false);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).kind).toBe('invalid_request');
      expect((err as ProviderError).message).toContain(field);
    }
  });

  it('count_tokens keeps messages and tools', () => {
    expect(
      toCountTokensRequest({
        model: 'm',
        system: 's',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 't' }],
      }),
    ).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'x' },
      ],
      tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object' } } }],
    });
  });
});
