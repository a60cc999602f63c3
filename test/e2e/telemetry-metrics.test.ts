// The gen_ai metrics on GET /metrics (Prometheus text) after requests through the official openai SDK: token
// usage by token type, operation duration with error type, time to first chunk for streams only; the model
// label bounded to the configured models (else `other`); nothing recorded while the telemetry plugin is off.
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;
let fake: OpenAIFake;
let client: OpenAI;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [
            { id: 'm1', name: 'listed', value: 'sk-metrics-one-aaaaaaaaaaaa', models: ['gpt-4o-mini'], weight: 1 },
            {
              id: 'm2',
              name: 'wildcard',
              value: 'sk-metrics-two-bbbbbbbbbbbb',
              models: ['*'],
              weight: 0,
              aliases: { fast: 'gpt-4.1' },
            },
          ],
        },
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${gw.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample line: `name{labels} value`, labels matched whole in any order. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = /^[^{]+\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const got = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (
      Object.entries(labels).every(([k, v]) => got[k] === v) &&
      Object.keys(got).length === Object.keys(labels).length
    ) {
      return Number(m[2]);
    }
  }
  return undefined;
}

const base = (model: string) => ({
  gen_ai_operation_name: 'chat',
  gen_ai_provider_name: 'openai',
  gen_ai_request_model: model,
});

describe('gen_ai metrics on GET /metrics', () => {
  it('token usage by type and operation duration, labelled with a configured model', async () => {
    const res = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'count my tokens please' }],
    });
    const text = await scrape();
    expect(text).toContain('# TYPE gen_ai_client_token_usage histogram');
    expect(text).toContain('# TYPE gen_ai_client_operation_duration_seconds histogram');
    expect(text).toContain('# TYPE gen_ai_client_operation_time_to_first_chunk_seconds histogram');
    const labels = base('gpt-4o-mini');
    expect(sample(text, 'gen_ai_client_token_usage_count', { ...labels, gen_ai_token_type: 'input' })).toBe(1);
    expect(sample(text, 'gen_ai_client_token_usage_sum', { ...labels, gen_ai_token_type: 'input' })).toBe(
      res.usage!.prompt_tokens,
    );
    expect(sample(text, 'gen_ai_client_token_usage_sum', { ...labels, gen_ai_token_type: 'output' })).toBe(
      res.usage!.completion_tokens,
    );
    expect(sample(text, 'gen_ai_client_operation_duration_seconds_count', { ...labels, error_type: '' })).toBe(1);
    // A unary request has no time to first chunk.
    expect(sample(text, 'gen_ai_client_operation_time_to_first_chunk_seconds_count', labels)).toBeUndefined();
    // The existing gateway metrics are still there.
    expect(text).toContain('gateway_requests_total{');
  });

  it('a model no key lists is labelled other; an alias target counts as configured', async () => {
    await client.chat.completions.create(
      { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'wild' }] },
      { headers: { 'x-gateway-key-id': 'm2' } },
    );
    await client.chat.completions.create(
      { model: 'openai/fast', messages: [{ role: 'user', content: 'aliased' }] },
      { headers: { 'x-gateway-key-id': 'm2' } },
    );
    const text = await scrape();
    expect(sample(text, 'gen_ai_client_operation_duration_seconds_count', { ...base('other'), error_type: '' })).toBe(
      1,
    );
    expect(sample(text, 'gen_ai_client_operation_duration_seconds_count', { ...base('gpt-4.1'), error_type: '' })).toBe(
      1,
    );
    expect(text).not.toContain('gen_ai_request_model="gpt-4o"');
  });

  it('a stream records its time to first chunk; a failure records its error type', async () => {
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream' }],
      stream: true,
    });
    for await (const _ of stream) {
      // drain
    }
    fake.script({ status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
    await expect(
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    const text = await scrape();
    const labels = base('gpt-4o-mini');
    expect(sample(text, 'gen_ai_client_operation_time_to_first_chunk_seconds_count', labels)).toBe(1);
    const failed = sample(text, 'gen_ai_client_operation_duration_seconds_count', { ...labels, error_type: '500' });
    expect(failed).toBe(1);
  });

  it('while the telemetry plugin is disabled nothing is recorded; enabled again, it counts again', async () => {
    const count = async () =>
      sample(await scrape(), 'gen_ai_client_operation_duration_seconds_count', {
        ...base('gpt-4o-mini'),
        error_type: '',
      }) ?? 0;
    const before = await count();
    gw.rt.telemetry.setEnabled(false);
    try {
      expect(gw.rt.telemetry.enabled).toBe(false);
      await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'a' }] });
      expect(await count()).toBe(before);
    } finally {
      gw.rt.telemetry.setEnabled(true);
    }
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'b' }] });
    expect(await count()).toBe(before + 1);
  });
});

describe('the Grafana dashboard in the chart', () => {
  it('queries only metrics this gateway serves at /metrics', async () => {
    const path = new URL('../../charts/gateway/dashboards/model-gateway.json', import.meta.url);
    const dashboard = JSON.parse(await readFile(path, 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
      templating: { list: { query?: unknown }[] };
    };
    const exprs = [
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
      ...dashboard.templating.list.map((v) => JSON.stringify(v.query ?? '')),
    ];
    const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:gen_ai|gateway)_[a-z_]+)\b/g)].map((m) => m[1]!)));
    expect(names.size).toBeGreaterThan(5);
    const served = await scrape();
    for (const name of names) {
      // A histogram's series carry _bucket/_sum/_count after the family name; a label name is no metric.
      if (/^gen_ai_(operation_name|provider_name|request_model|token_type)$/.test(name)) continue;
      const family = name.replace(/_(bucket|sum|count)$/, '');
      expect(served, name).toContain(`# TYPE ${family} `);
    }
  });
});
