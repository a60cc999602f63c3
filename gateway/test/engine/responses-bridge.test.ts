// The Responses ⇄ chat bridge: what a chat-only upstream receives for a Responses request, and what the
// Responses client gets back (checked by the official `openai` SDK against a loopback server).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer, sendJson } from '../../../test/fakes/server.ts';
import { chatToResponses, responsesToChat } from '../../src/engine/responses-bridge.ts';
import type { ChatRequest, ChatResponse } from '../../src/schemas/chat.ts';
import type { ResponsesRequest } from '../../src/schemas/responses.ts';

function toChat(req: Partial<ResponsesRequest>): ChatRequest {
  const r = responsesToChat({ model: 'gpt-4o-mini', input: 'hi', ...req });
  if (!r.ok) throw new Error(`unexpected refusal: ${r.error}`);
  return r.value;
}

function refusal(req: Partial<ResponsesRequest>): string {
  const r = responsesToChat({ model: 'gpt-4o-mini', input: 'hi', ...req });
  if (r.ok) throw new Error('expected a refusal');
  return r.error;
}

describe('responsesToChat', () => {
  it('turns instructions and a string input into system + user, and maps the sampling settings', () => {
    const chat = toChat({
      input: 'What is 2+2?',
      instructions: 'Be terse.',
      stream: true,
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u-1',
      reasoning: { effort: 'low', summary: 'auto' },
      metadata: { trace: 'abc' },
      store: true,
      text: { verbosity: 'low' },
    });
    expect(chat).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'What is 2+2?' },
      ],
      stream: true,
      max_completion_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u-1',
      reasoning_effort: 'low',
      verbosity: 'low',
    });
  });

  it('translates message items with every content kind, typed or not', () => {
    const chat = toChat({
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Stay polite.' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Describe these.' },
            { type: 'input_image', image_url: 'https://x.test/cat.png', detail: 'low' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' },
            { type: 'input_image', file_id: 'file-img', detail: 'auto' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' },
            { type: 'input_file', file_id: 'file-doc' },
            { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
          ],
        },
        {
          id: 'msg_prev',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'Un chat. ', annotations: [] },
            { type: 'output_text', text: 'Et un PDF.', annotations: [] },
          ],
        },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'developer', content: 'Answer in French.' },
      { role: 'system', content: [{ type: 'text', text: 'Stay polite.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe these.' },
          { type: 'image_url', image_url: { url: 'https://x.test/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
          { type: 'file', file: { file_id: 'file-img' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-doc' } },
          { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
        ],
      },
      { role: 'assistant', content: 'Un chat. Et un PDF.' },
      { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
    ]);
  });

  it('merges a turn of function calls into one assistant message and answers them with tool messages', () => {
    const chat = toChat({
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_p', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_r', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_p', output: '{"c":21}' },
        { type: 'function_call_output', call_id: 'call_r', output: [{ type: 'input_text', text: '{"c":25}' }] },
        {
          type: 'function_call_output',
          call_id: 'call_img',
          output: [
            { type: 'input_text', text: 'chart:' },
            { type: 'input_image', image_url: 'https://x.test/c.png' },
          ],
        },
        { type: 'function_call', call_id: 'call_t', name: 'time', arguments: '{}' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_p', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_r', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p', content: '{"c":21}' },
      { role: 'tool', tool_call_id: 'call_r', content: '{"c":25}' },
      {
        role: 'tool',
        tool_call_id: 'call_img',
        content: [
          { type: 'text', text: 'chart:' },
          { type: 'image_url', image_url: { url: 'https://x.test/c.png' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_t', type: 'function', function: { name: 'time', arguments: '{}' } }],
      },
    ]);
  });

  it('maps function tools, tool_choice and parallel_tool_calls', () => {
    const tool = {
      type: 'function',
      name: 'weather',
      description: 'Current weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      strict: true,
    };
    const chat = toChat({
      tools: [tool],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: false,
    });
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'weather', description: 'Current weather', parameters: tool.parameters, strict: true },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
    for (const choice of ['auto', 'none', 'required'] as const) {
      expect(toChat({ tools: [tool], tool_choice: choice }).tool_choice).toBe(choice);
    }
    // Responses clients send these without tools; chat upstreams reject them there
    const bare = toChat({ tool_choice: 'auto', parallel_tool_calls: true });
    expect(bare).not.toHaveProperty('tool_choice');
    expect(bare).not.toHaveProperty('parallel_tool_calls');
    expect(bare).not.toHaveProperty('tools');
  });

  it('maps text.format to response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    expect(
      toChat({ text: { format: { type: 'json_schema', name: 'out', description: 'd', schema, strict: true } } })
        .response_format,
    ).toEqual({ type: 'json_schema', json_schema: { name: 'out', description: 'd', schema, strict: true } });
    expect(toChat({ text: { format: { type: 'json_object' } } }).response_format).toEqual({ type: 'json_object' });
    expect(toChat({ text: { format: { type: 'text' } } }).response_format).toEqual({ type: 'text' });
    expect(toChat({})).not.toHaveProperty('response_format');
  });

  it('refuses what chat cannot do, naming the field', () => {
    expect(refusal({ previous_response_id: 'resp_1' })).toMatch(/^previous_response_id: /);
    expect(refusal({ conversation: 'conv_1' })).toMatch(/^conversation: /);
    expect(refusal({ background: true })).toMatch(/^background: /);
    expect(
      refusal({
        input: [
          { role: 'user', content: 'a' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      }),
    ).toBe(
      "input[1].type: 'item_reference' items are not supported when the model is served through the chat completions API",
    );
    expect(refusal({ input: [{ type: 'file_search_call', id: 'fs_1', queries: [], status: 'completed' }] })).toMatch(
      /^input\[0\]\.type: 'file_search_call'/,
    );
    expect(refusal({ input: [{ content: 'no role' }] })).toBe('input[0]: an input item needs a type or a role');
    expect(refusal({ input: [{ role: 'tool', content: 'x' }] })).toMatch(/^input\[0\]\.role: /);
    expect(refusal({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] })).toBe(
      'input[0].call_id: expected a string',
    );
    expect(
      refusal({ input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x.test/a.pdf' }] }] }),
    ).toMatch(/^input\[0\]\.content\[0\]\.file_url: /);
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] })).toBe(
      'input[0].content[0]: input_image needs image_url or file_id',
    );
    expect(refusal({ tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] })).toMatch(
      /^tools\[1\]\.type: 'web_search' is a hosted tool/,
    );
    expect(refusal({ tool_choice: { type: 'file_search' } })).toMatch(/^tool_choice\.type: 'file_search'/);
    expect(refusal({ text: { format: { type: 'yaml' } } })).toMatch(/^text\.format\.type: /);
    expect(refusal({ input: [] })).toBe('input: no messages to send');
  });
});

const req: ResponsesRequest = {
  model: 'gpt-4o-mini',
  input: 'Weather in Paris?',
  instructions: 'Be brief.',
  max_output_tokens: 200,
  temperature: 0.5,
  metadata: { run: '7' },
  tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' }, strict: false }],
};
const ids = { responseId: 'resp_abc', now: 1_750_000_000 };

function chatResponse(
  message: ChatResponse['choices'][0]['message'],
  finish: 'stop' | 'length' | 'tool_calls' | 'content_filter',
): ChatResponse {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_750_000_000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: {
      prompt_tokens: 30,
      completion_tokens: 12,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 5 },
    },
  };
}

describe('chatToResponses', () => {
  it('makes reasoning and message items, maps usage and echoes the request settings', () => {
    const res = chatToResponses(
      chatResponse({ role: 'assistant', content: 'Sunny, 21°C.', reasoning_content: 'Check the forecast.' }, 'stop'),
      req,
      ids,
    );
    expect(res).toMatchObject({
      id: 'resp_abc',
      object: 'response',
      created_at: 1_750_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: 200,
      metadata: { run: '7' },
      model: 'gpt-4o-mini-2024-07-18',
      parallel_tool_calls: true,
      previous_response_id: null,
      temperature: 0.5,
      top_p: null,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: req.tools,
      usage: {
        input_tokens: 30,
        input_tokens_details: { cached_tokens: 8 },
        output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 42,
      },
    });
    expect(res.output).toEqual([
      { id: 'rs_abc_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Check the forecast.' }] },
      {
        id: 'msg_abc_1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Sunny, 21°C.', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('turns tool calls into function_call items', () => {
    const res = chatToResponses(
      chatResponse(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: '', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        'tool_calls',
      ),
      req,
      ids,
    );
    expect(res.status).toBe('completed');
    expect(res.output).toEqual([
      {
        id: 'fc_abc_0',
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'call_1',
        name: 'weather',
      },
      {
        id: 'fc_abc_1',
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Rome"}',
        call_id: 'call_abc_1',
        name: 'weather',
      },
    ]);
  });

  it('reports a cut-off answer as incomplete, with the reason', () => {
    const long = chatToResponses(chatResponse({ role: 'assistant', content: 'It is sun' }, 'length'), req, ids);
    expect(long.status).toBe('incomplete');
    expect(long.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(long.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    const filtered = chatToResponses(chatResponse({ role: 'assistant', content: '' }, 'content_filter'), req, ids);
    expect(filtered).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
  });

  it('keeps a refusal as a refusal part', () => {
    const res = chatToResponses(chatResponse({ role: 'assistant', content: null, refusal: 'No.' }, 'stop'), req, ids);
    expect(res.output).toEqual([
      {
        id: 'msg_abc_0',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'refusal', refusal: 'No.' }],
      },
    ]);
  });
});

describe('chatToResponses through the official openai SDK', () => {
  let server: FakeServer;
  let client: OpenAI;
  beforeAll(async () => {
    server = await new FakeServer([
      {
        method: 'POST',
        path: '/v1/responses',
        handler: (_req, res) => {
          const chat = chatResponse(
            {
              role: 'assistant',
              content: 'Sunny, 21°C.',
              reasoning_content: 'Check.',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
            },
            'tool_calls',
          );
          sendJson(res, 200, chatToResponses(chat, req, ids));
        },
      },
    ]).start();
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => server.stop());

  it('parses the response and derives output_text', async () => {
    const res = await client.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Paris?' });
    expect(res.output_text).toBe('Sunny, 21°C.');
    expect(res.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBe(5);
  });
});
