// Cohere through a real gateway, driven by the official openai SDK: chat translated to /v2/chat (tool calls
// with their tool plan, tool messages, images, json_object + schema), its SSE stream, /v2/embed, token counting
// through /v1/tokenize, Responses bridged through chat, and the model list.
import { describe, expect, it } from 'vitest';
import { type CohereFake, createCohereFake } from '../fakes/cohere.ts';
import {
  ASK,
  answerToolResult,
  askWithTool,
  atFake,
  countTokens,
  expectNoTextCompletions,
  expectResponsesStream,
  expectStreamMatches,
  extraFields,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  PERSON_SCHEMA,
  PNG_DATA_URL,
  responsesToolRoundTrip,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
  WEATHER_TOOL,
} from './providers-helpers.ts';

const KEY = 'co-e2e-aaaaaaaaaaaaaaaaaaaaaaaa';
const MODEL = 'command-a-03-2025';
const model = `cohere/${MODEL}`;

let fake: CohereFake;
const env = useProviderGateway({
  fakes: () => [fake],
  start: async () => {
    fake = await createCohereFake().start();
    fake.apiKey = KEY;
    return {
      cohere: atFake(fake.url, { id: 'co', name: 'cohere-main', value: KEY, models: ['*'] }),
    };
  },
});

describe('chat', () => {
  it('translates to /v2/chat and back', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 30, top_p: 0.9 });
    expect(data.choices[0]?.message.content).toBe('echo: hello there');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.model).toBe(MODEL);
    // billed units: 5 input words, 3 output pieces
    expect(data.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(extraFields(data)).toMatchObject({ provider: 'cohere', resolved_model_used: MODEL });
    const req = fake.last();
    expect(req.path).toBe('/v2/chat');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.json).toEqual({ model: MODEL, messages: ASK, max_tokens: 30, p: 0.9 });
  });

  it('streams the same text over SSE with a usage chunk, and ends cleanly', async () => {
    const { streamed } = await expectStreamMatches(env.client, model, { plainToo: true });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(streamed.extra).toMatchObject({ provider: 'cohere' });
    expect(fake.last().headers.accept).toContain('text/event-stream');
    expect(upstreamJson(fake.last())['stream']).toBe(true);
  });

  it('returns a tool call, then sends the result back as a tool message', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call).toMatchObject({ name: 'get_weather', args: { city: TOOL_QUESTION } });
    expect(upstreamJson(fake.last())['tools']).toEqual([WEATHER_TOOL]);

    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe(`tool said: ${TOOL_RESULT}`);
    expect(upstreamJson(fake.last())['messages']).toEqual([
      { role: 'user', content: TOOL_QUESTION },
      {
        role: 'assistant',
        // Cohere's tool plan came back as reasoning_content and returns to Cohere as tool_plan
        tool_plan: 'I will call get_weather.',
        tool_calls: [
          { id: call.id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(call.args) } },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT },
    ]);
  });

  it('assembles a streamed tool call', async () => {
    const call = await streamOneToolCall(env.client, model, { city: TOOL_QUESTION });
    expect(call.id).toMatch(/^get_weather_/);
  });

  it('sends images as image_url content parts', async () => {
    const data = await env.client.chat.completions.create({ model, messages: [IMAGE_MESSAGE] });
    expect(data.choices[0]?.message.content).toBe('echo: What is in this picture?');
    expect(upstreamJson(fake.last())['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        ],
      },
    ]);
  });

  it('sends json_schema response_format as json_object with its schema', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, response_format: PERSON_FORMAT });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ echo: 'hello there' });
    expect(upstreamJson(fake.last())['response_format']).toEqual({ type: 'json_object', json_schema: PERSON_SCHEMA });
  });
});

describe('responses (bridged through chat)', () => {
  it('answers with output_text, plain and streamed', async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe('echo: tell me a story');
    expect(fake.last().path).toBe('/v2/chat');
    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', res.output_text);
    expect(streamed.completedStatus).toBe('completed');
  });

  it('bridges a Responses function call and its function_call_output', async () => {
    const { callId, text } = await responsesToolRoundTrip(env.client, model, { city: TOOL_QUESTION });
    expect(text).toBe(`tool said: ${TOOL_RESULT}`);
    // the result reached the upstream in its own format
    expect(fake.last().json).toMatchObject({
      messages: [{}, {}, { role: 'tool', tool_call_id: callId, content: TOOL_RESULT }],
    });
  });
});

describe('other operations', () => {
  it('embeds with /v2/embed', async () => {
    const res = await env.client.embeddings.create({
      model: 'cohere/embed-v4.0',
      input: ['one two', 'three'],
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.embedding.length)).toEqual([16, 16]);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(fake.last().path).toBe('/v2/embed');
    expect(fake.last().json).toEqual({
      model: 'embed-v4.0',
      texts: ['one two', 'three'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 16,
    });
  });

  it('counts tokens with /v1/tokenize', async () => {
    const { status, json } = await countTokens(env.gw, { model, messages: ASK });
    expect(status).toBe(200);
    expect(json['input_tokens']).toBe(5);
    expect(fake.last().path).toBe('/v1/tokenize');
    expect(fake.last().json).toEqual({ text: 'You are terse.\nhello there', model: MODEL });
  });

  it('lists the models as cohere/<name>', async () => {
    const ids = await listedModelIds(env.client);
    expect(ids).toEqual(expect.arrayContaining(fake.models.map((m) => `cohere/${m}`)));
    expect(fake.last().path).toBe('/v1/models');
  });

  it('has no text completions', async () => {
    await expectNoTextCompletions(env.client, model);
    expect(fake.requests).toHaveLength(0);
  });
});
