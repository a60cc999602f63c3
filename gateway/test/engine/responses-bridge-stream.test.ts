// The chat-chunk → Responses-event stream translator: events leave on the chunk that produced them, in the
// order the Responses protocol defines, and the official `openai` SDK accumulates them into the right response.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer, sendSse } from '../../../test/fakes/server.ts';
import { ChatToResponsesStream, chatStreamToResponses } from '../../src/engine/responses-bridge.ts';
import type { ChatChunk, ChatChunkChoice, Usage } from '../../src/schemas/chat.ts';
import type { ResponsesRequest, ResponsesStreamEvent } from '../../src/schemas/responses.ts';

const req: ResponsesRequest = { model: 'gpt-4o-mini', input: 'Weather in Paris?', stream: true };
const ids = { responseId: 'resp_abc', now: 1_750_000_000 };
const usage: Usage = {
  prompt_tokens: 20,
  completion_tokens: 9,
  total_tokens: 29,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 3 },
};

function chunk(delta: ChatChunkChoice['delta'], finish: ChatChunkChoice['finish_reason'] = null): ChatChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_750_000_000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function usageChunk(): ChatChunk {
  return { ...chunk({}), choices: [], usage };
}

const textChunks = (): ChatChunk[] => [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Sunny' }),
  chunk({ content: ', 21°C.' }),
  chunk({}, 'stop'),
  usageChunk(),
];

const toolChunks = (): ChatChunk[] => [
  chunk({ role: 'assistant', reasoning_content: 'Need the ' }),
  chunk({ reasoning_content: 'forecast.' }),
  chunk({ content: 'Checking.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_p', type: 'function', function: { name: 'weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({
    tool_calls: [
      { index: 1, id: 'call_r', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
    ],
  }),
  chunk({}, 'tool_calls'),
  usageChunk(),
];

function run(chunks: ChatChunk[]): ResponsesStreamEvent[][] {
  const t = new ChatToResponsesStream(req, ids);
  return [...chunks.map((c) => t.push(c)), t.finish()];
}

const types = (events: ResponsesStreamEvent[]): string[] => events.map((e) => e.type);

describe('ChatToResponsesStream', () => {
  it('streams text: each delta on its own chunk, done events at the finish, usage in response.completed', () => {
    const perChunk = run(textChunks());
    expect(perChunk.map(types)).toEqual([
      ['response.created', 'response.in_progress'],
      ['response.output_item.added', 'response.content_part.added', 'response.output_text.delta'],
      ['response.output_text.delta'],
      ['response.output_text.done', 'response.content_part.done', 'response.output_item.done'],
      [],
      ['response.completed'],
    ]);
    const events = perChunk.flat();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const at = { item_id: 'msg_abc_0', output_index: 0, content_index: 0 };
    expect(events[0]).toMatchObject({ response: { id: 'resp_abc', status: 'in_progress', output: [], usage: null } });
    expect(events[2]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { id: 'msg_abc_0', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    expect(events[3]).toEqual({
      type: 'response.content_part.added',
      sequence_number: 3,
      ...at,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
    expect(events[4]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 4,
      ...at,
      delta: 'Sunny',
      logprobs: [],
    });
    expect(events[5]).toMatchObject({ ...at, delta: ', 21°C.' });
    expect(events[6]).toEqual({
      type: 'response.output_text.done',
      sequence_number: 6,
      ...at,
      text: 'Sunny, 21°C.',
      logprobs: [],
    });
    const item = {
      id: 'msg_abc_0',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Sunny, 21°C.', annotations: [], logprobs: [] }],
    };
    expect(events[7]).toMatchObject({ ...at, part: item.content[0] });
    expect(events[8]).toEqual({ type: 'response.output_item.done', sequence_number: 8, output_index: 0, item });
    expect(events[9]).toMatchObject({
      type: 'response.completed',
      response: {
        id: 'resp_abc',
        status: 'completed',
        model: 'gpt-4o-mini-2024-07-18',
        output: [item],
        incomplete_details: null,
        usage: {
          input_tokens: 20,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 9,
          output_tokens_details: { reasoning_tokens: 3 },
          total_tokens: 29,
        },
      },
    });
  });

  it('streams reasoning, text and tool calls as separate items, arguments delta by delta', () => {
    const perChunk = run(toolChunks());
    expect(perChunk.map(types)).toEqual([
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.delta',
      ],
      ['response.reasoning_summary_text.delta'],
      [
        'response.reasoning_summary_text.done',
        'response.reasoning_summary_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
      ],
      [
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.output_item.added',
      ],
      ['response.function_call_arguments.delta'],
      ['response.function_call_arguments.delta'],
      ['response.output_item.added', 'response.function_call_arguments.delta'],
      [
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.function_call_arguments.done',
        'response.output_item.done',
      ],
      [],
      ['response.completed'],
    ]);
    const events = perChunk.flat();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(perChunk[0]?.[4]).toMatchObject({
      item_id: 'rs_abc_0',
      output_index: 0,
      summary_index: 0,
      delta: 'Need the ',
    });
    expect(perChunk[3]?.[3]).toMatchObject({
      output_index: 2,
      item: {
        id: 'fc_abc_2',
        type: 'function_call',
        status: 'in_progress',
        call_id: 'call_p',
        name: 'weather',
        arguments: '',
      },
    });
    expect(perChunk[4]?.[0]).toMatchObject({ item_id: 'fc_abc_2', output_index: 2, delta: '{"city":' });
    expect(perChunk[6]?.[1]).toMatchObject({ item_id: 'fc_abc_3', output_index: 3, delta: '{"city":"Rome"}' });
    expect(perChunk[7]?.[0]).toMatchObject({ item_id: 'fc_abc_2', arguments: '{"city":"Paris"}' });
    const completed = perChunk[9]?.[0];
    expect(completed?.['response']).toMatchObject({
      status: 'completed',
      output: [
        { id: 'rs_abc_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need the forecast.' }] },
        {
          id: 'msg_abc_1',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Checking.' }],
        },
        {
          id: 'fc_abc_2',
          type: 'function_call',
          status: 'completed',
          call_id: 'call_p',
          arguments: '{"city":"Paris"}',
        },
        { id: 'fc_abc_3', type: 'function_call', status: 'completed', call_id: 'call_r', arguments: '{"city":"Rome"}' },
      ],
    });
  });

  it('ends a cut-off answer with response.incomplete and an incomplete last item', () => {
    const events = run([chunk({ content: 'It is sun' }), chunk({}, 'length'), usageChunk()]).flat();
    expect(events.at(-2)).toMatchObject({ type: 'response.output_item.done', item: { status: 'incomplete' } });
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: {
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        usage: { total_tokens: 29 },
      },
    });
  });

  it('streams a refusal as refusal events', () => {
    const events = run([chunk({ refusal: 'I can' }), chunk({ refusal: 'not.' }), chunk({}, 'stop')]).flat();
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[6]).toMatchObject({ item_id: 'msg_abc_0', content_index: 0, refusal: 'I cannot.' });
  });

  it('closes what is open and completes when the upstream ends without a finish reason', () => {
    const t = new ChatToResponsesStream(req, ids);
    t.push(chunk({ content: 'partial' }));
    const end = t.finish();
    expect(types(end)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(end.at(-1)).toMatchObject({ response: { usage: null, output: [{ content: [{ text: 'partial' }] }] } });
    expect(t.finish()).toEqual([]);
    expect(() => t.push(chunk({ content: 'late' }))).toThrow(/after finish/);
  });
});

describe('chatStreamToResponses', () => {
  it('yields the events of a chunk before the next chunk arrives', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    async function* upstream(): AsyncGenerator<ChatChunk> {
      yield chunk({ content: 'Sunny' });
      await gate;
      yield chunk({}, 'stop');
    }
    const events = chatStreamToResponses(upstream(), req, ids);
    const seen: string[] = [];
    for await (const e of events) {
      seen.push(e.type);
      if (e.type === 'response.output_text.delta') break;
    }
    expect(seen.at(-1)).toBe('response.output_text.delta');
    release();
  });
});

describe('the event stream through the official openai SDK', () => {
  let server: FakeServer;
  let client: OpenAI;
  let script: ChatChunk[] = [];
  beforeAll(async () => {
    server = await new FakeServer([
      {
        method: 'POST',
        path: '/v1/responses',
        handler: async (_req, res) => {
          async function* source(): AsyncGenerator<ChatChunk> {
            yield* script;
          }
          const events: { event: string; data: ResponsesStreamEvent }[] = [];
          for await (const e of chatStreamToResponses(source(), req, ids)) events.push({ event: e.type, data: e });
          await sendSse(res, events);
        },
      },
    ]).start();
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => server.stop());

  it('accumulates the text stream into the final response', async () => {
    script = textChunks();
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Weather in Paris?' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Sunny', ', 21°C.']);
    expect(final.output_text).toBe('Sunny, 21°C.');
    expect(final.status).toBe('completed');
    expect(final.usage?.total_tokens).toBe(29);
  });

  it('accumulates reasoning, text and function calls', async () => {
    script = toolChunks();
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Weather in Paris?' });
    const args: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => args.push(e.snapshot));
    const final = await stream.finalResponse();
    expect(args).toEqual(['{"city":', '{"city":"Paris"}', '{"city":"Rome"}']);
    expect(final.output_text).toBe('Checking.');
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    const calls = final.output.flatMap((o) => (o.type === 'function_call' ? [[o.call_id, o.arguments]] : []));
    expect(calls).toEqual([
      ['call_p', '{"city":"Paris"}'],
      ['call_r', '{"city":"Rome"}'],
    ]);
  });

  it('accepts an incomplete stream', async () => {
    script = [chunk({ content: 'It is sun' }), chunk({}, 'length'), usageChunk()];
    const final = await client.responses.stream({ model: 'gpt-4o-mini', input: 'Weather?' }).finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details?.reason).toBe('max_output_tokens');
    expect(final.output_text).toBe('It is sun');
  });
});
