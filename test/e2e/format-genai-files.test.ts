// The Gemini Files API on `/genai`, driven by the official `@google/genai` SDK: `files.upload` (Google's resumable
// protocol through the gateway's own upload URL, in one request and in several 8 MiB ones), `files.list`,
// `files.get`, `files.delete`, each virtual key held to its own files (another's is a 404 in Google's error
// shape), a generateContent naming the uploaded file; and raw requests for the multipart form and every bad
// input (nothing sent upstream).
import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGeminiFake } from '../fakes/gemini.ts';
import { type GeminiStoredFile, geminiFileRoutes } from '../fakes/gemini-files.ts';
import { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { createVk, pc } from './governance-helpers.ts';
import { router } from './referenced-files-helpers.ts';

const GEMINI = 'gemini-2.5-flash';
let filesFake: FakeServer;
let chat: FakeServer;
let base: FakeServer;
let gw: TestGateway;
let a: { id: string; value: string };
let b: { id: string; value: string };
const stored = new Map<string, GeminiStoredFile>();

beforeAll(async () => {
  filesFake = await createFilesFake();
  chat = await createGeminiFake().start();
  base = await router((p) =>
    p.startsWith('/upload/') || p.startsWith('/v1beta/files') ? filesFake.url : chat.url,
  ).start();
  gw = await startTestGateway({
    config: {
      providers: {
        gemini: {
          network_config: { base_url: base.url, max_retries: 0 },
          keys: [{ id: 'gm', name: 'gm', value: 'gemini-files-native-aaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  a = await createVk(gw, { provider_configs: [pc('gemini')] });
  b = await createVk(gw, { provider_configs: [pc('gemini')] });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([filesFake, chat, base].map((f) => f?.stop()));
});

async function createFilesFake(): Promise<FakeServer> {
  return new FakeServer(geminiFileRoutes(stored)).start();
}

const client = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${gw.url}/genai` } });
const upstreamCount = () => filesFake.requests.length;

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('the SDK against /genai files', () => {
  it('uploads, lists, gets and deletes; each key sees only its own', async () => {
    const mine = await client(a.value).files.upload({
      file: new Blob(['hello from a'], { type: 'text/plain' }),
      config: { displayName: 'a.txt' },
    });
    expect(mine.name).toMatch(/^files\//);
    expect(mine.displayName).toBe('a.txt');
    expect(mine.mimeType).toBe('text/plain');
    expect(mine.sizeBytes).toBe('12');
    const theirs = await client(b.value).files.upload({
      file: new Blob(['hello from b'], { type: 'text/plain' }),
      config: { displayName: 'b.txt' },
    });
    // Google received the caller's bytes and metadata.
    expect(stored.get(mine.name!)?.content.toString()).toBe('hello from a');

    const listed: string[] = [];
    for await (const f of await client(a.value).files.list({ config: { pageSize: 10 } })) listed.push(f.name!);
    expect(listed).toContain(mine.name);
    expect(listed).not.toContain(theirs.name);

    expect((await client(a.value).files.get({ name: mine.name! })).uri).toBe(mine.uri);
    const before = upstreamCount();
    const refused = await apiError(client(b.value).files.get({ name: mine.name! }));
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.message.slice(refused.message.indexOf('{')))).toMatchObject({
      error: { code: 404, status: 'NOT_FOUND' },
    });
    expect((await apiError(client(b.value).files.delete({ name: mine.name! }))).status).toBe(404);
    expect(upstreamCount()).toBe(before);
    // A gateway token reaches every tenant's file.
    expect((await client(INFERENCE_TOKEN).files.get({ name: theirs.name! })).name).toBe(theirs.name);

    await client(a.value).files.delete({ name: mine.name! });
    expect(stored.has(mine.name!)).toBe(false);
    // Its owner row went with it: the key's list no longer holds it, and a get is a 404.
    expect((await apiError(client(a.value).files.get({ name: mine.name! }))).status).toBe(404);
  });

  it('uploads from a path in several 8 MiB requests through one Google session', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/genai-files-`);
    const path = `${dir}/big.bin`;
    const bytes = Buffer.alloc(9 * 1024 * 1024 + 5, 7);
    await writeFile(path, bytes);
    const f = await client(a.value).files.upload({ file: path, config: { mimeType: 'application/octet-stream' } });
    expect(f.sizeBytes).toBe(String(bytes.length));
    expect(stored.get(f.name!)?.content.equals(bytes)).toBe(true);
    // Held to its uploader like a one-request upload.
    expect((await apiError(client(b.value).files.get({ name: f.name! }))).status).toBe(404);
    expect((await client(a.value).files.get({ name: f.name! })).name).toBe(f.name);
  }, 30_000);

  it('lets a generateContent name the uploaded file by its URI, for its uploader only', async () => {
    const f = await client(a.value).files.upload({
      file: new Blob(['%PDF-1.4 mine'], { type: 'application/pdf' }),
      config: { displayName: 'doc.pdf' },
    });
    const ask = (key: string) =>
      client(key).models.generateContent({
        model: GEMINI,
        contents: [
          {
            role: 'user',
            parts: [{ text: 'summarise' }, { fileData: { fileUri: f.uri!, mimeType: 'application/pdf' } }],
          },
        ],
      });
    await ask(a.value);
    expect(JSON.stringify(chat.requests.at(-1)?.json)).toContain(f.uri);
    expect((await apiError(ask(b.value))).status).toBe(404);
  });
});

describe('governance', () => {
  it('admits an upload as /v1/files does: past the request limit it is a 429, nothing sent', async () => {
    const limited = await createVk(gw, {
      provider_configs: [pc('gemini')],
      rate_limit: { request_max_limit: 1, request_reset_duration: '1h' },
    });
    await client(limited.value).files.upload({ file: new Blob(['one'], { type: 'text/plain' }) });
    const before = upstreamCount();
    const refused = await apiError(
      client(limited.value).files.upload({ file: new Blob(['two'], { type: 'text/plain' }) }),
    );
    expect(refused.status).toBe(429);
    expect(upstreamCount()).toBe(before);
  });
});

describe('batch input through /genai', () => {
  const line = (key: string, uri: string) =>
    `${JSON.stringify({ key, request: { contents: [{ role: 'user', parts: [{ fileData: { fileUri: uri, mimeType: 'text/plain' } }] }] } })}\n`;

  it("checks a virtual key's JSONL upload as /v1/files does: another key's file is a 404, nothing kept", async () => {
    const mine = await client(a.value).files.upload({ file: new Blob(['a'], { type: 'text/plain' }) });
    const count = stored.size;
    const refused = await apiError(
      client(b.value).files.upload({
        file: new Blob([line('x', mine.uri!)], { type: 'application/jsonl' }),
        config: { displayName: 'in.jsonl' },
      }),
    );
    expect(refused.status).toBe(404);
    expect(refused.message).toContain(`file ${mine.name}`);
    expect(stored.size).toBe(count);
    const ok = await client(a.value).files.upload({
      file: new Blob([line('x', mine.uri!)], { type: 'application/jsonl' }),
      config: { displayName: 'in.jsonl' },
    });
    expect(ok.name).toMatch(/^files\//);
  });

  it('refuses a JSONL batch input that comes in several requests, before Google sees it', async () => {
    const mine = await client(a.value).files.upload({ file: new Blob(['a'], { type: 'text/plain' }) });
    const one = line('x', mine.uri!);
    const big = one.repeat(Math.ceil((9 * 1024 * 1024) / one.length));
    const before = upstreamCount();
    const refused = await apiError(
      client(a.value).files.upload({ file: new Blob([big], { type: 'application/jsonl' }) }),
    );
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('one request');
    expect(upstreamCount()).toBe(before);
  }, 30_000);
});

describe('raw requests', () => {
  const url = (path: string) => `${gw.url}/genai${path}`;
  const start = (
    key: string,
    headers: Record<string, string> = {},
    body: string | null = '{"file":{"displayName":"x"}}',
  ) =>
    fetch(url('/upload/v1beta/files'), {
      method: 'POST',
      headers: {
        'x-goog-api-key': key,
        'content-type': 'application/json',
        'x-goog-upload-protocol': 'resumable',
        'x-goog-upload-command': 'start',
        'x-goog-upload-header-content-type': 'text/plain',
        ...headers,
      },
      ...(body === null ? {} : { body }),
    });
  const send = (to: string, key: string, body: string, headers: Record<string, string> = {}) =>
    fetch(to, {
      method: 'POST',
      headers: {
        'x-goog-api-key': key,
        'x-goog-upload-command': 'upload, finalize',
        'x-goog-upload-offset': '0',
        ...headers,
      },
      body,
    });
  async function googleError(res: Response, code: number) {
    expect(res.status).toBe(code);
    const body = (await res.json()) as { error: { code: number; message: string; status: string } };
    expect(body.error.code).toBe(code);
    expect(typeof body.error.status).toBe('string');
    return body.error.message;
  }

  it('answers a start with an upload URL on the gateway that holds no Google URL', async () => {
    const before = upstreamCount();
    const res = await start(a.value);
    expect(res.status).toBe(200);
    const to = res.headers.get('x-goog-upload-url')!;
    expect(to.startsWith(`${gw.url}/genai/upload/v1beta/files?upload_id=`)).toBe(true);
    expect(to).not.toContain(base.url.replace('http://', ''));
    expect(upstreamCount()).toBe(before);
    const done = await send(to, a.value, 'abc');
    expect(done.status).toBe(200);
    expect(done.headers.get('x-goog-upload-status')).toBe('final');
    expect(((await done.json()) as { file: { sizeBytes: string } }).file.sizeBytes).toBe('3');
    // The session ended with its upload.
    await googleError(await send(to, a.value, 'abc'), 404);
  });

  it('refuses bad starts and bad bytes in Google error shape, sending nothing upstream', async () => {
    const before = upstreamCount();
    expect(await googleError(await start(a.value, {}, null), 400)).toContain('metadata');
    expect(await googleError(await start(a.value, {}, 'not json'), 400)).toContain('metadata');
    expect(await googleError(await start(a.value, { 'x-goog-upload-protocol': 'multipart' }), 400)).toContain(
      'x-goog-upload-protocol',
    );
    expect(await googleError(await start(a.value, { 'x-goog-upload-command': 'upload' }), 400)).toContain(
      'x-goog-upload-command',
    );
    await googleError(await start(a.value, { 'x-goog-upload-header-content-length': String(2 ** 40) }), 413);
    expect((await start('', {})).status).toBe(401);

    const to = (await start(a.value)).headers.get('x-goog-upload-url')!;
    expect(await googleError(await send(to, a.value, 'abc', { 'x-goog-upload-offset': '5' }), 400)).toContain('offset');
    expect(await googleError(await send(to, a.value, 'abc', { 'x-goog-upload-offset': 'x' }), 400)).toContain('offset');
    expect(await googleError(await send(to, a.value, 'abc', { 'x-goog-upload-command': 'explode' }), 400)).toContain(
      'x-goog-upload-command',
    );
    // Another key, a tampered token, a made-up one: 404 alike.
    await googleError(await send(to, b.value, 'abc'), 404);
    const token = new URL(to).searchParams.get('upload_id')!;
    const tampered = to.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
    await googleError(await send(tampered, a.value, 'abc'), 404);
    await googleError(await send(to.replace(token, 'short'), a.value, 'abc'), 404);
    expect(upstreamCount()).toBe(before);
    // The rightful caller can still finish it.
    expect((await send(to, a.value, 'abc')).status).toBe(200);
  });

  /** A form sent as one buffer: an early refusal then cannot cut the client's writing short. */
  async function postForm(form: FormData) {
    const encoded = new Response(form);
    const body = Buffer.from(await encoded.arrayBuffer());
    const type = encoded.headers.get('content-type')!;
    return fetch(url('/upload/v1beta/files'), {
      method: 'POST',
      headers: { 'x-goog-api-key': a.value, 'content-type': type },
      body,
    });
  }

  it('takes a multipart form of metadata and file in one call, and refuses one without a file', async () => {
    const form = new FormData();
    form.set('metadata', JSON.stringify({ file: { displayName: 'form.txt' } }));
    form.set('file', new Blob(['form bytes'], { type: 'text/plain' }), 'form.txt');
    const res = await postForm(form);
    expect(res.status, await res.clone().text()).toBe(200);
    const file = ((await res.json()) as { file: { name: string; displayName: string } }).file;
    expect(file.displayName).toBe('form.txt');
    expect(stored.get(file.name)?.content.toString()).toBe('form bytes');
    expect(
      (await client(b.value)
        .files.get({ name: file.name })
        .catch((e: ApiError) => e)) instanceof ApiError,
    ).toBe(true);

    const before = upstreamCount();
    const none = new FormData();
    none.set('metadata', '{}');
    const bad = await postForm(none);
    expect(await googleError(bad, 400)).toContain('file');
    const badMeta = new FormData();
    badMeta.set('metadata', '[1]');
    badMeta.set('file', new Blob(['x']), 'x.txt');
    const r2 = await postForm(badMeta);
    expect(await googleError(r2, 400)).toContain('metadata');
    expect(upstreamCount()).toBe(before);
  });

  it('refuses every route without credentials', async () => {
    for (const [method, path] of [
      ['POST', '/upload/v1beta/files'],
      ['POST', '/upload/v1/files'],
      ['GET', '/v1beta/files'],
      ['GET', '/v1beta/files/abc'],
      ['DELETE', '/v1beta/files/abc'],
    ] as const) {
      const res = await fetch(url(path), { method });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });
});
