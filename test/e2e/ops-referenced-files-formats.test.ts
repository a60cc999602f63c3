// Files named inside native-format inference requests are held to the virtual key that uploaded them: Anthropic
// Messages' file sources, container uploads and code-execution container on `/anthropic`, Gemini's fileData parts
// on `/genai`. Another key (or a made-up id) gets 404 in the format's own error shape before anything is sent or
// charged; gateway tokens reach every tenant's. Each format's official SDK is the client.
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI, type Part } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicFake } from '../fakes/anthropic.ts';
import { type AnthropicStoredFile, anthropicFileRoutes } from '../fakes/anthropic-files.ts';
import { createGeminiFake } from '../fakes/gemini.ts';
import { type GeminiStoredFile, geminiFileRoutes } from '../fakes/gemini-files.ts';
import { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { createVk, pc, waitFor } from './governance-helpers.ts';
import { expectRefused, failureOf, router, sdkFailure } from './referenced-files-helpers.ts';

let claude: FakeServer;
let gemini: FakeServer;
const fakes: FakeServer[] = [];
let gw: TestGateway;
let a: { id: string; value: string };
let b: { id: string; value: string };

const BETA = 'files-api-2025-04-14';
const CLAUDE = 'claude-test-model';
const GEMINI = 'gemini-2.5-flash';

beforeAll(async () => {
  const claudeFiles = await new FakeServer(anthropicFileRoutes(new Map<string, AnthropicStoredFile>())).start();
  const geminiFiles = await new FakeServer(geminiFileRoutes(new Map<string, GeminiStoredFile>())).start();
  claude = await createAnthropicFake().start();
  gemini = await createGeminiFake().start();
  const claudeBase = await router((p) => (p.startsWith('/v1/files') ? claudeFiles.url : claude.url)).start();
  const geminiBase = await router((p) =>
    p.startsWith('/upload/') || p.startsWith('/v1beta/files') ? geminiFiles.url : gemini.url,
  ).start();
  fakes.push(claudeFiles, geminiFiles, claude, gemini, claudeBase, geminiBase);
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: {
          network_config: { base_url: claudeBase.url, max_retries: 0 },
          keys: [{ id: 'an', name: 'an', value: 'sk-ant-referenced-aaaaaaaa', models: ['*'] }],
        },
        gemini: {
          network_config: { base_url: geminiBase.url, max_retries: 0 },
          keys: [{ id: 'gm', name: 'gm', value: 'gemini-referenced-aaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  const configs = [pc('anthropic'), pc('gemini')];
  a = await createVk(gw, { provider_configs: configs });
  b = await createVk(gw, { provider_configs: configs, budgets: [{ max_limit: 100, reset_duration: '1d' }] });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all(fakes.map((f) => f.stop()));
});

/** Uploads through the gateway's `/v1/files` as `key`, to `provider`: the file is then that key's. */
async function upload(key: string, provider: string) {
  const files = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).files;
  return files.create(
    { file: await toFile(Buffer.from('%PDF-1.4 tenant'), 'a.pdf', { type: 'application/pdf' }), purpose: 'user_data' },
    { headers: { 'x-model-provider': provider } },
  );
}

describe('/anthropic', () => {
  const client = (key: string) => new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: key, maxRetries: 0 });
  type Block = Anthropic.Beta.Messages.BetaContentBlockParam;
  const ask = (key: string, blocks: Block[], extra: { container?: string } = {}) =>
    client(key).beta.messages.create({
      model: CLAUDE,
      max_tokens: 64,
      betas: [BETA],
      messages: [{ role: 'user', content: [...blocks, { type: 'text', text: 'summarise' }] }],
      ...extra,
    });
  const document = (id: string): Block => ({ type: 'document', source: { type: 'file', file_id: id } });
  const image = (id: string): Block => ({ type: 'image', source: { type: 'file', file_id: id } });
  const refused = (call: () => Promise<unknown>) => () => failureOf(call(), sdkFailure);

  it('holds document and image file sources to their uploader; a gateway token reaches them', async () => {
    const mine = await upload(a.value, 'anthropic');
    await ask(a.value, [document(mine.id)]);
    expect(JSON.stringify(claude.last().json)).toContain(mine.id);
    await ask(INFERENCE_TOKEN, [image(mine.id)]);
    for (const block of [document(mine.id), image(mine.id)]) {
      await expectRefused(
        gw,
        b.id,
        [claude],
        refused(() => ask(b.value, [block])),
        `file ${mine.id} not found`,
      );
    }
    // Count tokens reads the file too.
    await expectRefused(
      gw,
      b.id,
      [claude],
      refused(() =>
        client(b.value).beta.messages.countTokens({
          model: CLAUDE,
          betas: [BETA],
          messages: [{ role: 'user', content: [document(mine.id)] }],
        }),
      ),
      `file ${mine.id} not found`,
    );
  });

  it("answers in Anthropic's error shape, and refuses a made-up file, a file in a tool result and a container", async () => {
    const before = claude.requests.length;
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.value, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: CLAUDE,
        max_tokens: 16,
        messages: [{ role: 'user', content: [document('file_made_up')] }],
      }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', message: 'file file_made_up not found' },
    });
    expect(claude.requests.length).toBe(before);

    const mine = await upload(a.value, 'anthropic');
    const inResult: Block[] = [
      { type: 'container_upload', file_id: mine.id },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'image', source: { type: 'file', file_id: mine.id } }],
      },
    ];
    for (const block of inResult) {
      await expectRefused(
        gw,
        b.id,
        [claude],
        refused(() => ask(b.value, [block])),
        `file ${mine.id} not found`,
      );
    }
    // No container is made through the gateway on Anthropic, so none is a virtual key's to name.
    await expectRefused(
      gw,
      b.id,
      [claude],
      refused(() => ask(b.value, [], { container: 'container_011abc' })),
      'container container_011abc not found',
    );
    await ask(INFERENCE_TOKEN, [], { container: 'container_011abc' });
  });
});

describe('/genai', () => {
  const client = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${gw.url}/genai` } });
  const ask = (key: string, part: Part) =>
    client(key).models.generateContent({
      model: GEMINI,
      contents: [{ role: 'user', parts: [{ text: 'summarise' }, part] }],
    });
  const fileData = (fileUri: string): Part => ({ fileData: { fileUri, mimeType: 'application/pdf' } });

  /** The SDK's error carries no headers: the refused request's row is found as the key's only one. */
  function refusedAs(key: { id: string; value: string }, part: Part) {
    return async () => {
      const f = await failureOf(ask(key.value, part), (err) =>
        err instanceof ApiError ? { status: err.status, requestId: null, message: err.message } : undefined,
      );
      const rows = await waitFor(
        async () =>
          (await (await gw.admin(`/api/logs?virtual_key_ids=${key.id}`)).json()) as { logs: { id: string }[] },
        (r) => r.logs.length > 0,
      );
      expect(rows.logs).toHaveLength(1);
      return { ...f, requestId: rows.logs[0]!.id };
    };
  }

  it('holds Files API parts (by URI or files/<id>) to their uploader; a gateway token reaches them', async () => {
    const mine = (await upload(a.value, 'gemini')) as { id: string; uri?: string };
    expect(mine.id).toMatch(/^files\//);
    expect(mine.uri).toMatch(/\/v1beta\/files\//);
    await ask(a.value, fileData(mine.uri!));
    expect(JSON.stringify(gemini.requests.at(-1)?.json)).toContain(mine.uri);
    await ask(a.value, fileData(mine.id));
    await ask(INFERENCE_TOKEN, fileData(mine.uri!));
    for (const ref of [mine.uri!, mine.id]) {
      const other = await createVk(gw, {
        provider_configs: [pc('gemini')],
        budgets: [{ max_limit: 100, reset_duration: '1d' }],
      });
      await expectRefused(gw, other.id, [gemini], refusedAs(other, fileData(ref)), `file ${mine.id} not found`);
    }
    // A public URL is not a provider file: it passes as before.
    await ask(a.value, fileData('https://example.com/brochure.pdf'));
  });
});
