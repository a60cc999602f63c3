// Governance on /genai (real gateway, Postgres + Redis, fake upstreams): a virtual key sent the SDK's way
// (`x-goog-api-key`) without the provider is refused in Google's shape; a budgeted key is charged for a native
// stream by its usageMetadata; every request has its log row with the model asked for and the one used; bad
// input is refused before anything is charged.
import { describe, expect, it } from 'vitest';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { expectGoogleError, genaiClient, post, sdkStatus, useGenaiGateway } from './format-genai-helpers.ts';
import { adminJson, budgetsOf, createVk, logOf, pc, usd, VK, waitFor } from './governance-helpers.ts';

const MODEL = 'gemini-2.5-flash';
/** nano-USD per output token of MODEL (input is free), so a charge is candidatesTokenCount times this. */
const OUTPUT_NANO = 1_000_000;

const env = useGenaiGateway();

async function usageOf(id: string): Promise<unknown> {
  return budgetsOf(await adminJson(env.gw, `${VK}/${id}`))[0]?.['current_usage'];
}

const path = (model: string, method: string) => `/genai/v1beta/models/${model}:${method}`;

describe('virtual keys on /genai', () => {
  it('a key without the provider gets 403 PERMISSION_DENIED, and the upstream is not called', async () => {
    const vk = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const denied = await sdkStatus(
      genaiClient(env.gw, vk.value).models.generateContent({ model: MODEL, contents: 'x' }),
    );
    expect(denied.status).toBe(403);
    expect(denied.message).toContain('PERMISSION_DENIED');
    expect(env.gemini.requests).toHaveLength(0);
    const ok = await genaiClient(env.gw, vk.value).models.generateContent({
      model: 'openai/gpt-4o-mini',
      contents: 'x',
    });
    expect(ok.text).toBeTruthy();
  });

  it('a budgeted key is charged for a native stream, by the usage of its events', async () => {
    await adminJson(env.gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'global',
      provider: 'gemini',
      model: MODEL,
      input_cost_per_token: 0,
      output_cost_per_token: usd(OUTPUT_NANO),
    });
    const vk = await createVk(env.gw, {
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
      provider_configs: [pc('gemini')],
    });
    const stream = await genaiClient(env.gw, vk.value).models.generateContentStream({
      model: MODEL,
      contents: 'one two three four',
    });
    let output = 0;
    for await (const chunk of stream) output = chunk.usageMetadata?.candidatesTokenCount ?? output;
    expect(output).toBeGreaterThan(1);
    const expected = usd(output * OUTPUT_NANO);
    expect(
      await waitFor(
        () => usageOf(vk.id),
        (u) => u === expected,
      ),
    ).toBe(expected);
  });

  it('bad input is refused with 400 and nothing is charged or sent upstream', async () => {
    const vk = await createVk(env.gw, {
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
      provider_configs: [pc('gemini'), pc('openai')],
    });
    const headers = { 'x-goog-api-key': vk.value };
    const cases: [string, unknown][] = [
      [path(MODEL, 'generateContent'), { contents: [] }],
      [path(MODEL, 'generateContent'), { contents: [{ role: 'user', parts: [] }] }],
      [
        path(MODEL, 'generateContent'),
        { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: -5 } },
      ],
      [path(MODEL, 'streamGenerateContent'), { contents: 'not a list' }],
      [path(MODEL, 'embedContent'), { content: { parts: [] } }],
      [path(MODEL, 'batchEmbedContents'), { requests: [] }],
      [path(MODEL, 'countTokens'), {}],
      [path('', 'generateContent'), { contents: [{ parts: [{ text: 'x' }] }] }],
      [path(MODEL, 'generateContent'), '{"not json'],
      [
        path('openai/gpt-4o-mini', 'generateContent'),
        { contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] },
      ],
    ];
    for (const [p, body] of cases) expectGoogleError(await post(env.gw, p, body, headers), 400, 'INVALID_ARGUMENT');
    expect(env.gemini.requests).toHaveLength(0);
    expect(env.fakes['openai']?.requests).toHaveLength(0);
    expect(await usageOf(vk.id)).toBe(0);
  });
});

describe('request logs of /genai', () => {
  it('log the model asked for and the one used: native, native stream, translated, embeddings', async () => {
    const text = { contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] };
    const calls = [
      { path: path(MODEL, 'generateContent'), body: text, requested: MODEL, used: MODEL, provider: 'gemini' },
      {
        path: `${path(MODEL, 'streamGenerateContent')}?alt=sse`,
        body: text,
        requested: MODEL,
        used: MODEL,
        provider: 'gemini',
      },
      { path: path(MODEL, 'streamGenerateContent'), body: text, requested: MODEL, used: MODEL, provider: 'gemini' },
      {
        path: path('openai/gpt-4o-mini', 'generateContent'),
        body: text,
        requested: 'openai/gpt-4o-mini',
        used: 'gpt-4o-mini',
        provider: 'openai',
      },
      {
        path: `${path('openai/gpt-4o-mini', 'streamGenerateContent')}?alt=sse`,
        body: text,
        requested: 'openai/gpt-4o-mini',
        used: 'gpt-4o-mini',
        provider: 'openai',
      },
    ];
    for (const c of calls) {
      const r = await post(env.gw, c.path, c.body);
      expect(r.status, r.text).toBe(200);
      const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
      expect(log, c.path).toMatchObject({
        provider: c.provider,
        original_model_requested: c.requested,
        resolved_model_used: c.used,
        status: 'success',
      });
      expect(log['completion_tokens'], c.path).toBeGreaterThan(0);
    }
    const embed = await post(env.gw, path('openai/text-embedding-3-small', 'embedContent'), {
      content: { parts: [{ text: 'hello' }] },
    });
    expect(embed.status, embed.text).toBe(200);
    expect((embed.json['embedding'] as { values: number[] }).values.length).toBeGreaterThan(0);
    expect(await logOf(env.gw, embed.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: 'openai/text-embedding-3-small',
      resolved_model_used: 'text-embedding-3-small',
      request_type: 'embedding',
    });
  });

  it('a failed request has its log row too', async () => {
    env.gemini.script({ status: 400, body: { error: { code: 400, message: 'nope', status: 'INVALID_ARGUMENT' } } });
    const r = await post(
      env.gw,
      path(MODEL, 'generateContent'),
      { contents: [{ parts: [{ text: 'x' }] }] },
      {
        'x-goog-api-key': INFERENCE_TOKEN,
      },
    );
    expectGoogleError(r, 400, 'INVALID_ARGUMENT');
    expect(await logOf(env.gw, r.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: MODEL,
      status_code: 400,
    });
  });
});
