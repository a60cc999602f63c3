// The tool codecs MCP injection uses per request format (pure): how each one adds the gateway's tools after the
// caller's own, reads the declared names and the model's calls, and builds the next request with the results
// (OpenAI chat and Responses, Anthropic Messages, Gemini, Bedrock Converse, Cohere v2 chat).
import { describe, expect, it } from 'vitest';
import { messagesTools } from '../../src/formats/anthropic/tools.ts';
import { cohereChatTools } from '../../src/formats/cohere/tools.ts';
import { converseTools } from '../../src/formats/converse/tools.ts';
import type { GenaiCall } from '../../src/formats/genai/call.ts';
import { genaiTools } from '../../src/formats/genai/tools.ts';
import { chatTools, responsesTools } from '../../src/formats/openai/tools.ts';
import type { ChatRequest } from '../../src/schemas/chat.ts';
import type { ResponsesRequest, ResponsesResponse } from '../../src/schemas/responses.ts';
import { chatAnswer } from './helpers.ts';

describe('chat tool codec', () => {
  it('appends tools after the caller’s own and reads the declared names', () => {
    const body: ChatRequest = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'mine' } }],
    };
    chatTools.addTools(body, [{ name: 'files-read', description: 'reads', parameters: { type: 'object' } }]);
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'mine' } },
      { type: 'function', function: { name: 'files-read', description: 'reads', parameters: { type: 'object' } } },
    ]);
    expect([...(chatTools.declared(body) ?? [])]).toEqual(['mine', 'files-read']);
  });

  it('reads the calls of a one-choice answer only', () => {
    const one = chatAnswer([{ id: 'a', name: 'files-read', arguments: '{}' }]);
    expect(chatTools.calls(one)).toEqual([{ id: 'a', name: 'files-read', arguments: '{}' }]);
    expect(chatTools.calls(chatAnswer([], 'done'))).toEqual([]);
    const two = { ...one, choices: [one.choices[0]!, { ...one.choices[0]!, index: 1 }] };
    expect(chatTools.calls(two)).toEqual([]);
  });

  it('appends the assistant turn (without response-only fields) and one tool message per output', () => {
    const body: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const res = chatAnswer([{ id: 'a', name: 'files-read', arguments: '{"path":"x"}' }]);
    Object.assign(res.choices[0]!.message, { annotations: [] });
    const next = chatTools.next(body, res, [{ id: 'a', name: 'files-read', output: 'contents' }]);
    expect(next.messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'files-read', arguments: '{"path":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'contents' },
    ]);
    expect(body.messages).toHaveLength(1);
  });
});

describe('responses tool codec', () => {
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'files-read', arguments: '{"path":"x"}' };
  const res = { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [fc] };

  it('adds non-strict function tools and reads declared function names only', () => {
    const body: ResponsesRequest = {
      model: 'm',
      input: 'hi',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'mine' }],
    };
    responsesTools.addTools(body, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect(body.tools?.[2]).toEqual({
      type: 'function',
      name: 'files-read',
      parameters: { type: 'object' },
      strict: false,
    });
    expect([...(responsesTools.declared(body) ?? [])]).toEqual(['mine', 'files-read']);
  });

  it('reads function_call items and appends the output items and function_call_output items', () => {
    expect(responsesTools.calls(res as ResponsesResponse)).toEqual([
      { id: 'call_1', name: 'files-read', arguments: '{"path":"x"}' },
    ]);
    const next = responsesTools.next({ model: 'm', input: 'hi', instructions: 'be brief' }, res as ResponsesResponse, [
      { id: 'call_1', name: 'files-read', output: 'contents' },
    ]);
    expect(next).toEqual({
      model: 'm',
      instructions: 'be brief',
      input: [
        { role: 'user', content: 'hi' },
        fc,
        { type: 'function_call_output', call_id: 'call_1', output: 'contents' },
      ],
    });
  });
});

describe('anthropic messages tool codec', () => {
  it('adds input_schema tools, reads tool_use blocks, appends the turn and a user message of tool_results', () => {
    const body = {
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [{ name: 'web_search', type: 'web_search_20250305' }],
    };
    messagesTools.addTools(body, [{ name: 'files-read', description: 'reads', parameters: { type: 'object' } }]);
    expect(body.tools[1]).toEqual({ name: 'files-read', description: 'reads', input_schema: { type: 'object' } });
    expect([...(messagesTools.declared(body) ?? [])]).toEqual(['web_search', 'files-read']);
    const thinking = { type: 'thinking', thinking: '...', signature: 'sig' };
    const use = { type: 'tool_use', id: 'toolu_1', name: 'files-read', input: { path: 'x' } };
    const res = { id: 'msg_1', type: 'message', role: 'assistant', content: [thinking, use], stop_reason: 'tool_use' };
    expect(messagesTools.calls(res)).toEqual([{ id: 'toolu_1', name: 'files-read', arguments: '{"path":"x"}' }]);
    expect(messagesTools.calls({ content: [{ type: 'text', text: 'done' }] })).toEqual([]);
    const next = messagesTools.next(body, res, [{ id: 'toolu_1', name: 'files-read', output: 'contents' }]);
    expect(next.messages.slice(1)).toEqual([
      { role: 'assistant', content: [thinking, use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents' }] },
    ]);
  });
});

describe('gemini tool codec', () => {
  it('takes no tools on embedding calls', () => {
    const embed: GenaiCall = { action: 'embedContent', body: { content: { parts: [{ text: 'x' }] } } };
    expect(genaiTools.declared(embed)).toBeUndefined();
  });

  it('extends the caller’s declarations tool, keeps other tools, answers calls in order with their ids', () => {
    const call: GenaiCall = {
      action: 'generateContent',
      sse: false,
      body: {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: 'mine' }] }],
      },
    };
    genaiTools.addTools(call, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect(call.action === 'generateContent' && call.body.tools).toEqual([
      { googleSearch: {} },
      { functionDeclarations: [{ name: 'mine' }, { name: 'files-read', parametersJsonSchema: { type: 'object' } }] },
    ]);
    expect([...(genaiTools.declared(call) ?? [])]).toEqual(['mine', 'files-read']);
    const parts = [
      { functionCall: { name: 'files-read', args: { a: 1 } }, thoughtSignature: 'sig' },
      { functionCall: { id: 'fc-2', name: 'files-read' } },
    ];
    const res = { body: { candidates: [{ content: { role: 'model', parts } }] }, usage: undefined };
    expect(genaiTools.calls(res)).toEqual([
      { id: 'call_0', name: 'files-read', arguments: '{"a":1}' },
      { id: 'fc-2', name: 'files-read', arguments: '{}' },
    ]);
    const next = genaiTools.next(call, res, [
      { id: 'call_0', name: 'files-read', output: 'one' },
      { id: 'fc-2', name: 'files-read', output: 'two' },
    ]);
    expect(next.action === 'generateContent' && next.body.contents.slice(1)).toEqual([
      { role: 'model', parts },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'files-read', response: { result: 'one' } } },
          { functionResponse: { id: 'fc-2', name: 'files-read', response: { result: 'two' } } },
        ],
      },
    ]);
    const two = { body: { candidates: [{ content: { parts } }, { content: { parts } }] }, usage: undefined };
    expect(genaiTools.calls(two)).toEqual([]);
  });
});

describe('bedrock converse tool codec', () => {
  it('adds toolSpec tools, reads toolUse blocks, appends the message and a user message of toolResults', () => {
    const body = { messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }] };
    converseTools.addTools(body, [{ name: 'files-read', description: '', parameters: { type: 'object' } }]);
    expect(body).toMatchObject({
      toolConfig: { tools: [{ toolSpec: { name: 'files-read', inputSchema: { json: { type: 'object' } } } }] },
    });
    expect([...(converseTools.declared(body) ?? [])]).toEqual(['files-read']);
    const use = { toolUse: { toolUseId: 'tu_1', name: 'files-read', input: { p: 1 } } };
    const res = { output: { message: { role: 'assistant', content: [{ text: 'let me see' }, use] } } };
    expect(converseTools.calls(res)).toEqual([{ id: 'tu_1', name: 'files-read', arguments: '{"p":1}' }]);
    const next = converseTools.next(body, res, [{ id: 'tu_1', name: 'files-read', output: 'contents' }]);
    expect(next.messages?.slice(1)).toEqual([
      { role: 'assistant', content: [{ text: 'let me see' }, use] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tu_1', content: [{ text: 'contents' }] } }] },
    ]);
  });
});

describe('cohere chat tool codec', () => {
  it('adds function tools, reads message.tool_calls, appends the plan and calls and one tool message per output', () => {
    const body = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
    cohereChatTools.addTools(body, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect([...(cohereChatTools.declared(body) ?? [])]).toEqual(['files-read']);
    const call = { id: 'c1', type: 'function', function: { name: 'files-read', arguments: '{}' } };
    const res = { message: { role: 'assistant', tool_plan: 'I will read', tool_calls: [call] } };
    expect(cohereChatTools.calls(res)).toEqual([{ id: 'c1', name: 'files-read', arguments: '{}' }]);
    const next = cohereChatTools.next(body, res, [{ id: 'c1', name: 'files-read', output: 'contents' }]);
    expect(next.messages.slice(1)).toEqual([
      { role: 'assistant', tool_plan: 'I will read', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'contents' },
    ]);
  });
});
