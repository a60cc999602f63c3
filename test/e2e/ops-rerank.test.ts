// POST /v1/rerank through a real gateway: cohere (its /v2/rerank, the call the /cohere pass-through makes) and
// bedrock (the Agents runtime's Rerank, SigV4-signed) and vertex (Discovery Engine ranking) against fakes in their wire formats; search units reported;
// bad input and providers without rerank refused before anything is sent.
import { describe, expect, it } from 'vitest';
import { createBedrockRerankFake } from '../fakes/bedrock-rerank.ts';
import { type CohereFake, createCohereFake } from '../fakes/cohere.ts';
import type { FakeServer } from '../fakes/server.ts';
import { createVertexRerankFake } from '../fakes/vertex-rerank.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { adminJson, budgetsOf, createVk, logOf, pc, usd, VK, waitFor } from './governance-helpers.ts';
import { atFake, useProviderGateway } from './providers-helpers.ts';

type Json = Record<string, unknown>;
const ACCESS_KEY = 'AKIAFAKERERANK000001';
const SECRET_KEY = 'fake-secret-rerank-0000000000000000000000';

let cohere: CohereFake;
let bedrock: FakeServer;
let vertex: FakeServer;
const env = useProviderGateway({
  fakes: () => [cohere, bedrock, vertex],
  start: async () => {
    vertex = await createVertexRerankFake('ya29.vertex-token').start();
    cohere = await createCohereFake().start();
    bedrock = await createBedrockRerankFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
    return {
      cohere: atFake(cohere.url, { id: 'co', name: 'cohere-main', value: 'co-key-rerank', models: ['*'] }),
      bedrock: {
        network_config: { base_url: bedrock.url, max_retries: 0 },
        keys: [
          {
            id: 'br',
            name: 'bedrock-main',
            value: '',
            models: ['*'],
            bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-west-2' },
          },
        ],
      },
      vertex: atFake(vertex.url, {
        id: 'vx',
        name: 'vertex-main',
        value: 'ya29.vertex-token',
        models: ['*'],
        vertex_key_config: { project_id: 'my-project', region: 'us-central1' },
      }),
      openai: atFake(cohere.url, { id: 'oa', name: 'openai-main', value: 'sk-openai', models: ['*'] }),
    };
  },
});

async function rerank(body: Json, token = INFERENCE_TOKEN): Promise<{ status: number; json: Json; id: string | null }> {
  const res = await fetch(`${env.gw.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json, id: res.headers.get('x-gateway-request-id') };
}

const DOCS = ['Berlin is in Germany', 'Paris is the capital of France', 'France grows wine'];

describe('rerank', () => {
  it('ranks with cohere, sends strings to /v2/rerank and returns documents when asked', async () => {
    const { status, json, id } = await rerank({
      model: 'cohere/rerank-v3.5',
      query: 'capital of France',
      documents: [DOCS[0], { text: DOCS[1]!, id: 'paris' }, DOCS[2]],
      top_n: 2,
      return_documents: true,
    });
    expect(status).toBe(200);
    const results = json['results'] as Json[];
    expect(results.map((r) => r['index'])).toEqual([1, 2]);
    expect(results[0]).toMatchObject({ document: { text: DOCS[1], id: 'paris' } });
    expect(json['model']).toBe('rerank-v3.5');
    expect(json['meta']).toMatchObject({ billed_units: { search_units: 1 } });
    expect(json['extra_fields']).toMatchObject({ provider: 'cohere', request_type: 'rerank' });
    const req = cohere.last();
    expect(req.path).toBe('/v2/rerank');
    expect(req.headers.authorization).toBe('Bearer co-key-rerank');
    expect(req.json).toEqual({ model: 'rerank-v3.5', query: 'capital of France', documents: DOCS, top_n: 2 });
    const log = await logOf(env.gw, id);
    expect(log).toMatchObject({ request_type: 'rerank', provider: 'cohere', status: 'success' });
    // one search unit at $2 per 1,000
    expect(log['cost_nano']).toBe(2_000_000);
  });

  it('ranks with bedrock through the Agents runtime Rerank API, signed, by model ARN', async () => {
    const { status, json } = await rerank({
      model: 'bedrock/amazon.rerank-v1:0',
      query: 'France wine',
      documents: DOCS,
    });
    expect(status).toBe(200);
    expect((json['results'] as Json[])[0]).toMatchObject({ index: 2 });
    expect(json['meta']).toMatchObject({ billed_units: { search_units: 1 } });
    const req = bedrock.last();
    expect(req.path).toBe('/rerank');
    expect(req.json).toMatchObject({
      queries: [{ type: 'TEXT', textQuery: { text: 'France wine' } }],
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 3,
          modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' },
        },
      },
    });
  });

  it('ranks with vertex through the Discovery Engine ranking API', async () => {
    const { status, json } = await rerank({
      model: 'vertex/semantic-ranker-default@latest',
      query: 'capital of France',
      documents: DOCS,
      top_n: 1,
      return_documents: true,
    });
    expect(status).toBe(200);
    expect(json['results']).toEqual([{ index: 1, relevance_score: expect.any(Number), document: { text: DOCS[1] } }]);
    const req = vertex.last();
    expect(req.path).toBe('/v1/projects/my-project/locations/global/rankingConfigs/default_ranking_config:rank');
    expect(req.json).toEqual({
      model: 'semantic-ranker-default@latest',
      query: 'capital of France',
      records: DOCS.map((content, i) => ({ id: String(i), content })),
      topN: 1,
      ignoreRecordDetailsInResponse: true,
    });
    vertex.reset();
    const tooMany = await rerank({
      model: 'vertex/semantic-ranker-default@latest',
      query: 'q',
      documents: Array(201).fill('d'),
    });
    expect(tooMany.status).toBe(400);
    expect(vertex.requests).toHaveLength(0);
  });

  it('refuses bad input and providers without rerank, sending nothing', async () => {
    const bad: Json[] = [
      { model: 'cohere/rerank-v3.5', query: '', documents: DOCS },
      { model: 'cohere/rerank-v3.5', query: 'q', documents: [] },
      { model: 'cohere/rerank-v3.5', query: 'q', documents: DOCS, top_n: 0 },
      { model: 'cohere/rerank-v3.5', documents: DOCS },
      { model: 'nope/rerank', query: 'q', documents: DOCS },
    ];
    for (const body of bad) expect((await rerank(body)).status).toBe(400);
    const unsupported = await rerank({ model: 'openai/gpt-4o-mini', query: 'q', documents: DOCS });
    expect(unsupported.status).toBe(400);
    expect(unsupported.json['error']).toMatchObject({ code: 'unsupported_operation' });
    expect(String((unsupported.json['error'] as Json)['message'])).toContain('openai');
    expect(String((unsupported.json['error'] as Json)['message'])).toContain('rerank');
    expect(cohere.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('charges a virtual key’s budget by search units; bad input and a budget too small charge and send nothing', async () => {
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
      provider_configs: [pc('cohere')],
    });
    const usage = async () => budgetsOf(await adminJson(env.gw, `${VK}/${key.id}`))[0]?.['current_usage'];
    expect((await rerank({ model: 'cohere/rerank-v3.5', query: '', documents: DOCS }, key.value)).status).toBe(400);
    expect(cohere.requests).toHaveLength(0);
    const docs = Array.from({ length: 150 }, (_, i) => `document ${i} about France`);
    const ok = await rerank({ model: 'cohere/rerank-v3.5', query: 'France', documents: docs }, key.value);
    expect(ok.status).toBe(200);
    // 150 documents are two search units at $2 per 1,000
    expect(await waitFor(usage, (u) => u === usd(4_000_000))).toBe(usd(4_000_000));
    const poor = await createVk(env.gw, {
      budgets: [{ max_limit: 0.001, reset_duration: '1d' }],
      provider_configs: [pc('cohere')],
    });
    cohere.reset();
    const refused = await rerank({ model: 'cohere/rerank-v3.5', query: 'France', documents: DOCS }, poor.value);
    expect(refused.status).toBe(402);
    expect(cohere.requests).toHaveLength(0);
  });
});
