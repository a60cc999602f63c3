// OpenAI and Azure OpenAI through a real gateway, driven by the official openai SDK: chat (plain, streamed,
// tools, images, structured output), embeddings, Responses, token counting and the model list, each checked
// against what the fake upstream received (paths, auth headers, bodies).
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, FAKE_MODELS, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import {
  ASK,
  answerToolResult,
  askImageWithFormat,
  askWithTool,
  atFake,
  countTokens,
  expectNoTokenCounting,
  expectResponsesStream,
  expectStreamMatches,
  extraFields,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  PNG_DATA_URL,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
  WEATHER_TOOL,
} from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-e2e-aaaaaaaaaaaaaaaa';
const AZURE_KEY = 'azure-e2e-bbbbbbbbbbbbbbbbbbbb';
const CHAT_DEPLOYMENT = 'chat-deploy-prod';
const EMBED_DEPLOYMENT = 'embed-deploy-prod';

let openai: OpenAIFake;
let azure: OpenAIFake;
const env = useProviderGateway({
  fakes: () => [openai, azure],
  start: async () => {
    openai = await createOpenAIFake().start();
    azure = await createOpenAIFake().start();
    return {
      openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: OPENAI_KEY, models: ['*'] }),
      azure: {
        network_config: { max_retries: 0 },
        keys: [
          {
            id: 'az',
            name: 'azure-main',
            value: AZURE_KEY,
            models: ['*'],
            aliases: { 'gpt-4o': CHAT_DEPLOYMENT, 'text-embedding-3-small': EMBED_DEPLOYMENT },
            azure_key_config: { endpoint: azure.url },
          },
        ],
      },
    };
  },
});

describe('openai', () => {
  const model = 'openai/gpt-4o-mini';

  it('answers a chat completion and forwards the body with the bearer key', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 50 });
    expect(data.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.model).toBe('gpt-4o-mini');
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
    expect(extraFields(data)).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini' });
    const req = openai.last();
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(req.json).toEqual({ model: 'gpt-4o-mini', messages: ASK, max_tokens: 50 });
  });

  it('streams the same text, a usage chunk with include_usage, and ends cleanly', async () => {
    const { whole, streamed } = await expectStreamMatches(env.client, model, { plainToo: false });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.total_tokens).toBe(whole.usage?.total_tokens);
    expect(streamed.extra).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini' });
    expect(upstreamJson(openai.last())).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('returns a tool call, then answers the tool result', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call.name).toBe('get_weather');
    expect(upstreamJson(openai.last())['tools']).toEqual([WEATHER_TOOL]);

    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', TOOL_QUESTION));
    expect(upstreamJson(openai.last())['messages']).toContainEqual({
      role: 'tool',
      tool_call_id: call.id,
      content: TOOL_RESULT,
    });
  });

  it('assembles a streamed tool call', async () => {
    const call = await streamOneToolCall(env.client, model, { query: TOOL_QUESTION });
    expect(call.id).not.toBe('');
  });

  it('passes image parts and json_schema response_format through unchanged', async () => {
    await askImageWithFormat(env.client, model);
    const body = upstreamJson(openai.last());
    expect(body['messages']).toEqual([IMAGE_MESSAGE]);
    expect(body['response_format']).toEqual(PERSON_FORMAT);
  });

  it('embeds text', async () => {
    const res = await env.client.embeddings.create({
      model: 'openai/text-embedding-3-small',
      input: ['one two', 'three'],
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]?.embedding).toHaveLength(16);
    expect(res.usage.prompt_tokens).toBe(3);
    expect(openai.last().path).toBe('/v1/embeddings');
    expect(upstreamJson(openai.last())).toMatchObject({ model: 'text-embedding-3-small', dimensions: 16 });
  });

  it('serves the Responses API natively, plain and streamed', async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe(fakeReply('gpt-4o-mini', 'tell me a story'));
    expect(openai.last().path).toBe('/v1/responses');
    expect(upstreamJson(openai.last())).toMatchObject({ model: 'gpt-4o-mini', input: 'tell me a story' });

    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', res.output_text);
    expect(streamed.types.at(-1)).toBe('response.completed');

    const final = await env.client.responses.stream({ model, input: 'tell me a story' }).finalResponse();
    expect(final.output_text).toBe(res.output_text);
  });

  it('counts input tokens through /responses/input_tokens', async () => {
    const { status, json } = await countTokens(env.gw, {
      model,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ object: 'response.input_tokens', input_tokens: 4 });
    expect(openai.last().path).toBe('/v1/responses/input_tokens');
    expect(openai.last().headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('answers text completions', async () => {
    const res = await env.client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(res.choices[0]?.text).toBe(` ${fakeReply('gpt-3.5-turbo-instruct', 'Say hi')}`);
    expect(openai.last().path).toBe('/v1/completions');
  });
});

describe('azure', () => {
  const model = 'azure/gpt-4o';
  const deploymentPath = `/openai/deployments/${CHAT_DEPLOYMENT}/chat/completions`;

  it('sends chat to the aliased deployment with the api-key header', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK });
    expect(data.choices[0]?.message.content).toBe(fakeReply(CHAT_DEPLOYMENT, 'hello there'));
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(extraFields(data)).toMatchObject({ provider: 'azure', resolved_model_used: CHAT_DEPLOYMENT });
    const req = azure.last();
    expect(req.path).toBe(deploymentPath);
    expect(new URL(req.url, 'http://x').searchParams.get('api-version')).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(req.headers['api-key']).toBe(AZURE_KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(upstreamJson(req)['messages']).toEqual(ASK);
    expect(openai.requests).toHaveLength(0);
  });

  it('streams the same text with usage', async () => {
    const { streamed } = await expectStreamMatches(env.client, model, { plainToo: false });
    expect(streamed.usage?.total_tokens).toBeGreaterThan(0);
    expect(azure.last().path).toBe(deploymentPath);
  });

  it('round-trips a tool call', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call.name).toBe('get_weather');
    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.message.content).toBe(fakeReply(CHAT_DEPLOYMENT, TOOL_QUESTION));
    expect(upstreamJson(azure.last())['messages']).toContainEqual({
      role: 'tool',
      tool_call_id: call.id,
      content: TOOL_RESULT,
    });
  });

  it('passes images and response_format to the deployment', async () => {
    await askImageWithFormat(env.client, model);
    const body = upstreamJson(azure.last());
    expect(JSON.stringify(body['messages'])).toContain(PNG_DATA_URL);
    expect(body['response_format']).toEqual(PERSON_FORMAT);
  });

  it('embeds through the embeddings deployment', async () => {
    const res = await env.client.embeddings.create({
      model: 'azure/text-embedding-3-small',
      input: 'a b c',
      encoding_format: 'float',
    });
    expect(res.data[0]?.embedding).toHaveLength(8);
    expect(res.usage.prompt_tokens).toBe(3);
    expect(azure.last().path).toBe(`/openai/deployments/${EMBED_DEPLOYMENT}/embeddings`);
  });

  it('serves Responses on the v1 route with the deployment as model', async () => {
    const res = await env.client.responses.create({ model, input: 'hi azure' });
    expect(res.output_text).toBe(fakeReply(CHAT_DEPLOYMENT, 'hi azure'));
    expect(azure.last().path).toBe('/openai/v1/responses');
    expect(upstreamJson(azure.last())['model']).toBe(CHAT_DEPLOYMENT);
    await expectResponsesStream(env.client, model, 'hi azure', res.output_text);
  });

  it('has no token counting', async () => {
    await expectNoTokenCounting(env.gw, model, [{ role: 'user', content: 'hi' }]);
    expect(azure.requests).toHaveLength(0);
  });
});

describe('models', () => {
  it('lists <provider>/<model> ids from both providers', async () => {
    const ids = await listedModelIds(env.client);
    for (const m of FAKE_MODELS) {
      expect(ids).toContain(`openai/${m}`);
      expect(ids).toContain(`azure/${m}`);
    }
    expect(openai.requests.map((r) => r.path)).toContain('/v1/models');
    expect(azure.requests.map((r) => [r.path, r.headers['api-key']])).toContainEqual(['/openai/v1/models', AZURE_KEY]);
  });
});
