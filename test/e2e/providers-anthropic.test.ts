// Anthropic through a real gateway, driven by the official openai SDK: the OpenAI wire format is translated to
// the Messages API (system, max_tokens, tool_use/tool_result, base64 images, output_config) and back, including
// the SSE stream, Responses bridged through chat, token counting and the model list.
import { describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import {
  ASK,
  answerToolResult,
  askWithTool,
  atFake,
  countTokens,
  expectNoEmbeddings,
  expectNoTextCompletions,
  expectResponsesStream,
  expectStreamMatches,
  extraFields,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  PERSON_SCHEMA,
  PNG_BASE64,
  responsesToolRoundTrip,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
  WEATHER_TOOL,
} from './providers-helpers.ts';

const KEY = 'sk-ant-e2e-aaaaaaaaaaaaaaaaaaaa';
const MODEL = 'claude-sonnet-4-5-20250929';
const model = `anthropic/${MODEL}`;

let fake: AnthropicFake;
const env = useProviderGateway({
  fakes: () => [fake],
  start: async () => {
    fake = await createAnthropicFake({ apiKey: KEY }).start();
    return {
      anthropic: atFake(fake.url, { id: 'an', name: 'anthropic-main', value: KEY, models: ['*'] }),
    };
  },
});

describe('chat', () => {
  it('translates to the Messages API and back', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, temperature: 0.2 });
    expect(data.choices[0]?.message.content).toBe(`[${MODEL}] hello there`);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.model).toBe(MODEL);
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(extraFields(data)).toMatchObject({ provider: 'anthropic', resolved_model_used: MODEL });
    const req = fake.last();
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(KEY);
    expect(req.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json).toEqual({
      model: MODEL,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
      max_tokens: 4096,
      temperature: 0.2,
    });
  });

  it('forwards max_tokens when given', async () => {
    await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 77 });
    expect(upstreamJson(fake.last())['max_tokens']).toBe(77);
  });

  it('streams the same text with a usage chunk and ends cleanly', async () => {
    const { whole, streamed } = await expectStreamMatches(env.client, model, { plainToo: true });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.completion_tokens).toBe(whole.usage?.completion_tokens);
    expect(streamed.usage?.prompt_tokens).toBe(whole.usage?.prompt_tokens);
    expect(streamed.extra).toMatchObject({ provider: 'anthropic' });
    expect(upstreamJson(fake.last())['stream']).toBe(true);
    expect(fake.openResponses).toBe(0);
  });

  it('returns a tool_use as a tool call, then sends the result back as a tool_result block', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'fake' } });
    expect(upstreamJson(fake.last())['tools']).toEqual([
      {
        name: 'get_weather',
        description: WEATHER_TOOL.function.description,
        input_schema: WEATHER_TOOL.function.parameters,
      },
    ]);

    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe(`tool result: ${TOOL_RESULT}`);
    expect(upstreamJson(fake.last())['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: TOOL_QUESTION }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'fake' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: TOOL_RESULT }] },
    ]);
  });

  it('assembles a streamed tool call from input_json deltas', async () => {
    const call = await streamOneToolCall(env.client, model, { city: 'fake' });
    expect(call.id).toMatch(/^toolu_/);
  });

  it('sends a data: URL image as a base64 image block', async () => {
    const data = await env.client.chat.completions.create({ model, messages: [IMAGE_MESSAGE] });
    expect(data.choices[0]?.message.content).toBe(`[${MODEL}] What is in this picture?`);
    expect(upstreamJson(fake.last())['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        ],
      },
    ]);
  });

  it('sends json_schema response_format as output_config.format', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, response_format: PERSON_FORMAT });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ name: 'fake', age: 1 });
    expect(upstreamJson(fake.last())['output_config']).toEqual({
      format: { type: 'json_schema', schema: PERSON_SCHEMA },
    });
  });
});

describe('responses (bridged through chat)', () => {
  it('answers with output_text', async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story', instructions: 'Be brief.' });
    expect(res.output_text).toBe(`[${MODEL}] tell me a story`);
    expect(res.status).toBe('completed');
    expect(res.usage?.input_tokens).toBeGreaterThan(0);
    expect(fake.last().path).toBe('/v1/messages');
    expect(upstreamJson(fake.last())['system']).toEqual([{ type: 'text', text: 'Be brief.' }]);
  });

  it('streams text deltas and a response.completed with the same text', async () => {
    const whole = await env.client.responses.create({ model, input: 'tell me a story' });
    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', whole.output_text);
    expect(streamed.completedStatus).toBe('completed');
    expect(streamed.types[0]).toBe('response.created');

    const final = await env.client.responses.stream({ model, input: 'tell me a story' }).finalResponse();
    expect(final.output_text).toBe(whole.output_text);
  });

  it('bridges a Responses function call and its function_call_output', async () => {
    const { callId, text } = await responsesToolRoundTrip(env.client, model, { city: 'fake' });
    expect(text).toBe(`tool result: ${TOOL_RESULT}`);
    // the result reached the upstream in its own format
    expect(fake.last().json).toMatchObject({
      messages: [
        {},
        {},
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: TOOL_RESULT }] },
      ],
    });
  });
});

describe('other operations', () => {
  it('counts tokens with /v1/messages/count_tokens', async () => {
    const { status, json } = await countTokens(env.gw, { model, messages: ASK });
    expect(status).toBe(200);
    expect(json['input_tokens']).toBeGreaterThan(0);
    const req = fake.last();
    expect(req.path).toBe('/v1/messages/count_tokens');
    expect(req.headers['x-api-key']).toBe(KEY);
    expect(req.json).toMatchObject({ model: MODEL, system: [{ type: 'text', text: 'You are terse.' }] });
  });

  it('lists the models as anthropic/<id>', async () => {
    const ids = await listedModelIds(env.client);
    expect(ids).toEqual(expect.arrayContaining(fake.options.models.map((m) => `anthropic/${m}`)));
    expect(fake.last().path).toBe('/v1/models');
  });

  it('has no embeddings or text completions', async () => {
    await expectNoEmbeddings(env.client, model);
    await expectNoTextCompletions(env.client, model);
    expect(fake.requests).toHaveLength(0);
  });
});
