// AWS Bedrock through a real gateway, driven by the official openai SDK: chat over Converse / ConverseStream
// (SigV4-signed, verified by the fake), tools as toolUse/toolResult, image bytes, structured output, Titan
// embeddings over InvokeModel, Responses bridged through chat, and token counting.
import { describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import type { RecordedRequest } from '../fakes/server.ts';
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
  PNG_BASE64,
  responsesToolRoundTrip,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
  WEATHER_TOOL,
} from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAE2ETESTKEY000001';
const SECRET_KEY = 'e2e-secret-key-0123456789abcdefghijklmn';
const REGION = 'eu-west-3';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const model = `bedrock/${MODEL}`;

let fake: BedrockFake;
const env = useProviderGateway({
  fakes: () => [fake],
  start: async () => {
    fake = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
    return {
      bedrock: atFake(fake.url, {
        id: 'br',
        name: 'bedrock-main',
        models: ['*'],
        bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: REGION },
      }),
    };
  },
});

/** The operation and decoded model id of a Bedrock runtime path. */
function operationOf(req: RecordedRequest): { modelId: string; op: string } {
  const m = /^\/model\/([^/]+)\/([a-z-]+)$/.exec(req.path);
  return { modelId: decodeURIComponent(m?.[1] ?? ''), op: m?.[2] ?? '' };
}

describe('chat', () => {
  it('calls Converse for the model, signed with the key for its region', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 64, temperature: 0.5 });
    expect(data.choices[0]?.message.content).toBe(`[${MODEL}] hello there`);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.model).toBe(MODEL);
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
    expect(extraFields(data)).toMatchObject({ provider: 'bedrock', resolved_model_used: MODEL });
    const req = fake.last();
    expect(operationOf(req)).toEqual({ modelId: MODEL, op: 'converse' });
    expect(req.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/\\d{8}/${REGION}/bedrock/aws4_request, `),
    );
    expect(req.json).toEqual({
      system: [{ text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
      inferenceConfig: { maxTokens: 64, temperature: 0.5 },
    });
  });

  it('streams the same text over ConverseStream with usage, and ends cleanly', async () => {
    const { whole, streamed } = await expectStreamMatches(env.client, model, { plainToo: true });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage).toMatchObject({
      prompt_tokens: whole.usage?.prompt_tokens,
      completion_tokens: whole.usage?.completion_tokens,
    });
    expect(streamed.extra).toMatchObject({ provider: 'bedrock' });
    expect(operationOf(fake.last()).op).toBe('converse-stream');
    expect(fake.openResponses).toBe(0);
  });

  it('returns a toolUse as a tool call, then sends the result back as a toolResult block', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'fake' } });
    expect(upstreamJson(fake.last())['toolConfig']).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: WEATHER_TOOL.function.description,
            inputSchema: { json: WEATHER_TOOL.function.parameters },
          },
        },
      ],
    });

    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe(`tool result: ${TOOL_RESULT}`);
    expect(upstreamJson(fake.last())['messages']).toEqual([
      { role: 'user', content: [{ text: TOOL_QUESTION }] },
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: call.id, name: 'get_weather', input: { city: 'fake' } } }],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: call.id, content: [{ text: TOOL_RESULT }] } }] },
    ]);
  });

  it('assembles a streamed tool call', async () => {
    const call = await streamOneToolCall(env.client, model, { city: 'fake' });
    expect(call.id).toMatch(/^tooluse_/);
  });

  it('sends a data: URL image as image bytes', async () => {
    const data = await env.client.chat.completions.create({ model, messages: [IMAGE_MESSAGE] });
    expect(data.choices[0]?.message.content).toBe(`[${MODEL}] What is in this picture?`);
    expect(upstreamJson(fake.last())['messages']).toEqual([
      {
        role: 'user',
        content: [{ text: 'What is in this picture?' }, { image: { format: 'png', source: { bytes: PNG_BASE64 } } }],
      },
    ]);
  });

  it('sends json_schema response_format as outputConfig.textFormat', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, response_format: PERSON_FORMAT });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ name: 'fake', age: 1 });
    expect(upstreamJson(fake.last())['outputConfig']).toEqual({
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { name: 'person', schema: JSON.stringify(PERSON_SCHEMA) } },
      },
    });
  });
});

describe('embeddings', () => {
  it('embeds with a Titan model, one InvokeModel call per text', async () => {
    const titan = 'amazon.titan-embed-text-v2:0';
    const res = await env.client.embeddings.create({
      model: `bedrock/${titan}`,
      input: ['first text', 'second text'],
      dimensions: 256,
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.embedding.length)).toEqual([256, 256]);
    expect(res.data[0]?.embedding).not.toEqual(res.data[1]?.embedding);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(fake.requests.map(operationOf)).toEqual([
      { modelId: titan, op: 'invoke' },
      { modelId: titan, op: 'invoke' },
    ]);
    expect(fake.requests.map((r) => upstreamJson(r)['inputText']).sort()).toEqual(['first text', 'second text']);
  });
});

describe('responses (bridged through chat)', () => {
  it('answers with output_text through Converse', async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe(`[${MODEL}] tell me a story`);
    expect(operationOf(fake.last()).op).toBe('converse');
  });

  it('streams text deltas and a response.completed with the same text', async () => {
    const whole = await env.client.responses.create({ model, input: 'tell me a story' });
    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', whole.output_text);
    expect(streamed.completedStatus).toBe('completed');
    expect(operationOf(fake.last()).op).toBe('converse-stream');
  });

  it('bridges a Responses function call and its function_call_output', async () => {
    const { callId, text } = await responsesToolRoundTrip(env.client, model, { city: 'fake' });
    expect(text).toBe(`tool result: ${TOOL_RESULT}`);
    // the result reached the upstream in its own format
    expect(fake.last().json).toMatchObject({
      messages: [
        {},
        {},
        { role: 'user', content: [{ toolResult: { toolUseId: callId, content: [{ text: TOOL_RESULT }] } }] },
      ],
    });
  });
});

describe('other operations', () => {
  it('counts tokens with CountTokens', async () => {
    const { status, json } = await countTokens(env.gw, { model, messages: ASK });
    expect(status).toBe(200);
    expect(json['input_tokens']).toBeGreaterThan(0);
    expect(operationOf(fake.last())).toEqual({ modelId: MODEL, op: 'count-tokens' });
    expect(upstreamJson(fake.last())).toEqual({
      input: {
        converse: {
          system: [{ text: 'You are terse.' }],
          messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
        },
      },
    });
  });

  it('lists no models (Bedrock has no runtime model list) without failing', async () => {
    const ids = await listedModelIds(env.client);
    expect(ids.filter((id) => id.startsWith('bedrock/'))).toEqual([]);
  });

  it('has no text completions', async () => {
    await expectNoTextCompletions(env.client, model);
    expect(fake.requests).toHaveLength(0);
  });
});
