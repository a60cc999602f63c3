// Files and containers named inside OpenAI-format inference requests (chat file parts, Responses input files and
// code-interpreter containers, a video's reference image, async jobs) are held to the virtual key that created
// them, as the resource routes hold them: another key gets 404 before anything is sent or charged, a made-up id
// is 404 too (no owner record proves it), and gateway tokens reach every tenant's.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { type ContainersFake, createOpenAIContainersFake } from '../fakes/openai-containers.ts';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import { createOpenAIVideosFake, type VideoFake } from '../fakes/openai-videos.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, pc, waitFor } from './governance-helpers.ts';
import { expectRefused, failureOf, router, sdkFailure, usedBudget } from './referenced-files-helpers.ts';

let files: OpenAIFilesFake;
let videos: VideoFake;
let containers: ContainersFake;
let chat: OpenAIFake;
let upstream: FakeServer;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;
let bId: string;
let bKey: string;

const on = { headers: { 'x-model-provider': 'openai' } };
const MODEL = 'openai/gpt-4o-mini';

beforeAll(async () => {
  [files, videos, containers, chat] = await Promise.all([
    createOpenAIFilesFake('/v1').start(),
    createOpenAIVideosFake().start(),
    createOpenAIContainersFake('/v1').start(),
    createOpenAIFake().start(),
  ]);
  upstream = await router((path) =>
    path.startsWith('/v1/videos')
      ? videos.url
      : path.startsWith('/v1/containers')
        ? containers.url
        : path.startsWith('/v1/files') || path.startsWith('/v1/batches')
          ? files.url
          : chat.url,
  ).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-referenced-aaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  // Priced, so a charge would show in B's budget.
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0.001,
    output_cost_per_token: 0.001,
  });
  const ka = await createVk(gw, { provider_configs: [pc('openai')] });
  const kb = await createVk(gw, {
    provider_configs: [pc('openai')],
    budgets: [{ max_limit: 100, reset_duration: '1d' }],
  });
  bId = kb.id;
  bKey = kb.value;
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  a = sdk(ka.value);
  b = sdk(kb.value);
  admin = sdk(INFERENCE_TOKEN);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([files?.stop(), videos?.stop(), containers?.stop(), chat?.stop(), upstream?.stop()]);
});

async function upload(client: OpenAI, purpose: 'user_data' | 'vision' = 'user_data') {
  return client.files.create({ file: await toFile(Buffer.from('%PDF-1.4 tenant'), 'a.pdf'), purpose }, on);
}

const fileChat = (fileId: string) => ({
  model: MODEL,
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'summarise' },
        { type: 'file' as const, file: { file_id: fileId } },
      ],
    },
  ],
});

/** The file ids of the chat file parts the upstream received last. */
function sentFileIds(): unknown[] {
  const body = chat.last().json as { messages: { content: { type: string; file?: { file_id: string } }[] }[] };
  return body.messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((p) => p.type === 'file')
    .map((p) => p.file?.file_id);
}

/** The call is made when expectRefused is ready for it. */
function refused(call: () => Promise<unknown>) {
  return () => failureOf(call(), sdkFailure);
}

describe('chat completions', () => {
  it('answers the owner and a gateway token; another key gets 404, nothing sent, nothing charged', async () => {
    const mine = await upload(a);
    await a.chat.completions.create(fileChat(mine.id));
    expect(sentFileIds()).toContain(mine.id);

    await expectRefused(
      gw,
      bId,
      [chat],
      refused(() => b.chat.completions.create(fileChat(mine.id))),
      `file ${mine.id} not found`,
    );
    // Streamed: refused before the stream starts, in the same shape.
    await expectRefused(
      gw,
      bId,
      [chat],
      refused(() => b.chat.completions.create({ ...fileChat(mine.id), stream: true })),
      `file ${mine.id} not found`,
    );
    // A file among several, and one named twice: the unowned one is named.
    const own = await upload(b);
    const both = fileChat(own.id);
    both.messages[0]!.content.push(
      { type: 'file', file: { file_id: mine.id } },
      { type: 'file', file: { file_id: own.id } },
    );
    await expectRefused(
      gw,
      bId,
      [chat],
      refused(() => b.chat.completions.create(both)),
      `file ${mine.id} not found`,
    );

    await admin.chat.completions.create(fileChat(mine.id));
    expect(sentFileIds()).toContain(mine.id);
    // B's own file goes through, and is charged (the budget checks above could have seen a charge).
    await b.chat.completions.create(fileChat(own.id));
    expect(sentFileIds()).toEqual([own.id]);
    expect(
      await waitFor(
        () => usedBudget(gw, bId),
        (u) => Number(u) > 0,
      ),
    ).toBeGreaterThan(0);
  });

  it('refuses a made-up id to a virtual key (no owner record proves it) and passes it on for a gateway token', async () => {
    const k = await createVk(gw, {
      provider_configs: [pc('openai')],
      budgets: [{ max_limit: 100, reset_duration: '1d' }],
    });
    const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.value, maxRetries: 0 });
    await expectRefused(
      gw,
      k.id,
      [chat],
      refused(() => c.chat.completions.create(fileChat('file-madeup'))),
      'file file-madeup not found',
    );
    await admin.chat.completions.create(fileChat('file-madeup'));
    expect(sentFileIds()).toEqual(['file-madeup']);
    // A plain request of the same key is not held up.
    expect(
      (await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })).object,
    ).toBe('chat.completion');
  });

  it('fails closed with 503 while the owner records cannot be read; plain requests still run', async () => {
    const mine = await upload(a);
    const db = gw.rt.state.db;
    await db.query('ALTER TABLE resource_owners RENAME TO resource_owners_away');
    try {
      const before = chat.requests.length;
      const f = await failureOf(a.chat.completions.create(fileChat(mine.id)), sdkFailure);
      expect(f.status).toBe(503);
      expect(chat.requests.length).toBe(before);
      await a.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
      // A gateway token is not checked, so it does not depend on the records.
      await admin.chat.completions.create(fileChat(mine.id));
    } finally {
      await db.query('ALTER TABLE resource_owners_away RENAME TO resource_owners');
    }
  });
});

describe('Responses', () => {
  const withFile = (fileId: string, type: 'input_file' | 'input_image' = 'input_file') => ({
    model: MODEL,
    input: [
      {
        role: 'user' as const,
        content: [
          { type: 'input_text' as const, text: 'read it' },
          type === 'input_file'
            ? { type: 'input_file' as const, file_id: fileId }
            : { type: 'input_image' as const, file_id: fileId, detail: 'auto' as const },
        ],
      },
    ],
  });

  it('holds input files and images to their owner', async () => {
    const mine = await upload(a);
    await a.responses.create(withFile(mine.id));
    expect(JSON.stringify(chat.last().json)).toContain(mine.id);
    await admin.responses.create(withFile(mine.id, 'input_image'));
    for (const body of [withFile(mine.id), withFile(mine.id, 'input_image')]) {
      await expectRefused(
        gw,
        bId,
        [chat],
        refused(() => b.responses.create(body)),
        `file ${mine.id} not found`,
      );
    }
  });

  it("holds the code interpreter's container and its file ids to their owner", async () => {
    const box = await a.containers.create({ name: 'mine' }, on);
    const mine = await upload(a);
    const tool = (container: string | { type: 'auto'; file_ids: string[] }) => ({
      model: MODEL,
      input: 'run it',
      tools: [{ type: 'code_interpreter' as const, container }],
    });
    await a.responses.create(tool(box.id));
    await a.responses.create(tool({ type: 'auto', file_ids: [mine.id] }));
    await expectRefused(
      gw,
      bId,
      [chat],
      refused(() => b.responses.create(tool(box.id))),
      `container ${box.id} not found`,
    );
    await expectRefused(
      gw,
      bId,
      [chat],
      refused(() => b.responses.create(tool({ type: 'auto', file_ids: [mine.id] }))),
      `file ${mine.id} not found`,
    );
    await admin.responses.create(tool(box.id));
  });
});

describe('videos', () => {
  it("holds a create's input_reference file id to its owner", async () => {
    const image = await upload(a, 'vision');
    const create = (client: OpenAI) =>
      client.videos.create({
        model: 'openai/sora-2' as 'sora-2',
        prompt: 'Waves',
        input_reference: { file_id: image.id },
      });
    await create(a);
    expect((await videos.lastForm()).get('input_reference[file_id]')).toBe(image.id);
    await expectRefused(
      gw,
      bId,
      [videos],
      refused(() => create(b)),
      `file ${image.id} not found`,
    );
    await create(admin);
  });
});

describe('async jobs', () => {
  it("refuse another key's file at submission: 404, nothing sent, nothing reserved", async () => {
    const mine = await upload(a);
    const sent = chat.requests.length;
    const budget = await usedBudget(gw, bId);
    const res = await fetch(`${gw.url}/v1/async/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(fileChat(mine.id)),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(`file ${mine.id} not found`);
    expect(chat.requests.length).toBe(sent);
    expect(await usedBudget(gw, bId)).toBe(budget);
    // The owner's own job with the same file is accepted and runs.
    const job = await a.post<{ id: string }>('/async/chat/completions', { body: fileChat(mine.id) });
    const done = await waitFor(
      () => a.get<{ status: string }>(`/async/chat/completions/${job.id}`),
      (j) => j.status !== 'queued' && j.status !== 'processing',
      15_000,
    );
    expect(done).toMatchObject({ status: 'completed' });
    expect(chat.requests.length).toBe(sent + 1);
  });
});
