// `/compat-a`: the OpenAI API as OpenAI serves it, driven by the official openai SDK (OpenAI and AzureOpenAI
// clients) with only the base URL and key changed: a bare model goes to `openai`, a deployment path to `azure`,
// unknown body fields reach the upstream, errors come back in OpenAI's shape (the gateway envelope, whose `error`
// object is OpenAI's), and the SDK's own credential carriers hold gateway credentials, never provider keys.
import OpenAI, { AzureOpenAI } from 'openai';
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { ASK, apiFailure, atFake, extraFields, upstreamJson, useProviderGateway } from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-compat-aaaaaaaaaaaaaaaa';
const AZURE_KEY = 'azure-compat-bbbbbbbbbbbbbbbbbbbb';
const DEPLOYMENT = 'chat-deploy-prod';

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
            aliases: { 'gpt-4o': DEPLOYMENT },
            azure_key_config: { endpoint: azure.url },
          },
        ],
      },
    };
  },
});

function compat(apiKey = INFERENCE_TOKEN): OpenAI {
  return new OpenAI({ baseURL: `${env.gw.url}/compat-a/v1`, apiKey, maxRetries: 0 });
}

describe('/compat-a/v1 with the OpenAI client', () => {
  it('sends a bare model to openai and keeps unknown body fields', async () => {
    const res = await compat().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: ASK,
      // A field newer than the gateway's schema: forwarded as it came.
      // @ts-expect-error not in the SDK's types
      future_option: { level: 2 },
    });
    expect(res.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    expect(extraFields(res)).toMatchObject({
      provider: 'openai',
      original_model_requested: 'gpt-4o-mini',
      resolved_model_used: 'gpt-4o-mini',
    });
    const sent = upstreamJson(openai.last());
    expect(sent['model']).toBe('gpt-4o-mini');
    expect(sent['future_option']).toEqual({ level: 2 });
  });

  it('streams, embeds, answers the Responses API and lists models', async () => {
    const stream = await compat().chat.completions.create({ model: 'gpt-4o-mini', messages: ASK, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    const emb = await compat().embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
    expect(emb.data[0]?.embedding.length).toBeGreaterThan(0);
    const resp = await compat().responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    expect(resp.output_text).toBe(fakeReply('gpt-4o-mini', 'hi'));
    const models = [];
    for await (const m of compat().models.list()) models.push(m.id);
    expect(models).toContain('openai/gpt-4o-mini');
  });

  it('still routes <provider>/<model> to that provider', async () => {
    const res = await compat().chat.completions.create({ model: 'azure/gpt-4o', messages: ASK });
    expect(extraFields(res)).toMatchObject({ provider: 'azure', resolved_model_used: DEPLOYMENT });
    expect(azure.last().path).toBe(`/openai/deployments/${DEPLOYMENT}/chat/completions`);
  });

  it('answers errors in OpenAI’s shape: a raw provider key is refused, an unknown path is 404', async () => {
    const raw = await apiFailure(compat(OPENAI_KEY).chat.completions.create({ model: 'gpt-4o-mini', messages: ASK }));
    expect(raw.status).toBe(401);
    expect(raw.error).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
    expect(openai.requests).toHaveLength(0);
    const bad = await apiFailure(
      // @ts-expect-error a hostile body: messages is not a list
      compat().chat.completions.create({ model: 'gpt-4o-mini', messages: 'hi' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ type: 'invalid_request_error' });
    const missing = await fetch(`${env.gw.url}/compat-a/v1/nothing-here`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});

describe('fallbacks by header', () => {
  it('tries x-gateway-fallbacks in order when the primary fails', async () => {
    openai.script({ status: 400, body: { error: { message: 'model gone', type: 'invalid_request_error' } } });
    const { data, response } = await compat()
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: ASK },
        { headers: { 'x-gateway-fallbacks': 'nowhere-provider/x, azure/gpt-4o' } },
      )
      .withResponse();
    expect(response.status).toBe(200);
    expect(extraFields(data)).toMatchObject({ provider: 'azure', resolved_model_used: DEPLOYMENT });
    expect(openai.requests).toHaveLength(1);
    expect(azure.requests).toHaveLength(1);
  });

  it('refuses a malformed fallback in the header with 400 naming it', async () => {
    const err = await apiFailure(
      compat().chat.completions.create(
        { model: 'gpt-4o-mini', messages: ASK },
        { headers: { 'x-gateway-fallbacks': 'azure/../../admin' } },
      ),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain('fallbacks[0]');
    expect(openai.requests).toHaveLength(0);
  });
});

describe('/compat-a with the AzureOpenAI client', () => {
  function azureClient(apiKey = INFERENCE_TOKEN): AzureOpenAI {
    return new AzureOpenAI({
      endpoint: `${env.gw.url}/compat-a`,
      apiKey,
      apiVersion: '2024-10-21',
      deployment: 'gpt-4o',
      maxRetries: 0,
    });
  }

  it('serves the deployment path through the azure provider, the key in api-key', async () => {
    const res = await azureClient().chat.completions.create({ model: '', messages: ASK });
    expect(res.choices[0]?.message.content).toBe(fakeReply(DEPLOYMENT, 'hello there'));
    expect(extraFields(res)).toMatchObject({
      provider: 'azure',
      original_model_requested: 'gpt-4o',
      resolved_model_used: DEPLOYMENT,
    });
    const up = azure.last();
    expect(up.path).toBe(`/openai/deployments/${DEPLOYMENT}/chat/completions`);
    // The gateway's key went upstream, not the caller's credential.
    expect(up.headers['api-key']).toBe(AZURE_KEY);
  });

  it('streams over the deployment path', async () => {
    const stream = await azureClient().chat.completions.create({ model: '', messages: ASK, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(fakeReply(DEPLOYMENT, 'hello there'));
  });

  it('refuses a raw Azure key in api-key', async () => {
    const err = await apiFailure(azureClient(AZURE_KEY).chat.completions.create({ model: '', messages: ASK }));
    expect(err.status).toBe(401);
    expect(azure.requests).toHaveLength(0);
  });
});
