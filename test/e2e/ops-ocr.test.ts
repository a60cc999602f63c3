// POST /v1/ocr through a real gateway against a Mistral OCR fake: the body goes on in Mistral's shape with the
// model rewritten and the document URL untouched (the gateway never fetches it); pages billed; bad input refused.
import { describe, expect, it } from 'vitest';
import { createMistralOcrFake } from '../fakes/mistral-ocr.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { logOf } from './governance-helpers.ts';
import { atFake, useProviderGateway } from './providers-helpers.ts';

type Json = Record<string, unknown>;

let mistral: FakeServer;
const env = useProviderGateway({
  fakes: () => [mistral],
  start: async () => {
    mistral = await createMistralOcrFake().start();
    return {
      mistral: atFake(mistral.url, { id: 'mi', name: 'mistral-main', value: 'mistral-ocr-key', models: ['*'] }),
      openai: atFake(mistral.url, { id: 'oa', name: 'openai-main', value: 'sk-openai', models: ['*'] }),
    };
  },
});

async function ocr(body: Json): Promise<{ status: number; json: Json; id: string | null }> {
  const res = await fetch(`${env.gw.url}/v1/ocr`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json, id: res.headers.get('x-gateway-request-id') };
}

// An address only the provider could reach: the gateway must pass it on, never fetch it.
const DOC_URL = 'http://169.254.169.254/latest/meta-data/report.pdf';

describe('ocr', () => {
  it('reads a document with mistral, passing the body on with the model rewritten', async () => {
    const { status, json, id } = await ocr({
      model: 'mistral/mistral-ocr-latest',
      document: { type: 'document_url', document_url: DOC_URL },
      pages: [0, 2],
      include_image_base64: true,
    });
    expect(status).toBe(200);
    const pages = json['pages'] as Json[];
    expect(pages.map((p) => p['index'])).toEqual([0, 2]);
    expect(String(pages[0]?.['markdown'])).toContain(DOC_URL);
    expect(json['usage_info']).toEqual({ pages_processed: 2, doc_size_bytes: 12345 });
    expect(json['extra_fields']).toMatchObject({ provider: 'mistral', resolved_model_used: 'mistral-ocr-latest' });
    const req = mistral.last();
    expect(req.path).toBe('/v1/ocr');
    expect(req.headers.authorization).toBe('Bearer mistral-ocr-key');
    expect(req.json).toEqual({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: DOC_URL },
      pages: [0, 2],
      include_image_base64: true,
    });
    const log = await logOf(env.gw, id);
    expect(log).toMatchObject({ request_type: 'ocr', provider: 'mistral', status: 'success' });
    // two pages processed at $1 per 1,000
    expect(log['cost_nano']).toBe(2_000_000);
  });

  it('reads an image by URL', async () => {
    const { status, json } = await ocr({
      model: 'mistral/mistral-ocr-latest',
      document: { type: 'image_url', image_url: 'data:image/png;base64,aGVsbG8=' },
    });
    expect(status).toBe(200);
    expect(json['pages']).toHaveLength(3);
  });

  it('refuses bad input and providers without OCR, sending nothing', async () => {
    const bad: Json[] = [
      { model: 'mistral/mistral-ocr-latest' },
      { model: 'mistral/mistral-ocr-latest', document: { type: 'pdf', url: DOC_URL } },
      { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url' } },
      { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: DOC_URL }, pages: [-1] },
      { model: 'nope/ocr', document: { type: 'document_url', document_url: DOC_URL } },
    ];
    for (const body of bad) expect((await ocr(body)).status).toBe(400);
    const unsupported = await ocr({
      model: 'openai/gpt-4o',
      document: { type: 'document_url', document_url: DOC_URL },
    });
    expect(unsupported.status).toBe(400);
    expect(unsupported.json['error']).toMatchObject({ code: 'unsupported_operation' });
    expect(mistral.requests).toHaveLength(0);
  });
});
