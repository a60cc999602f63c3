// The output items of a stored Response belong to the virtual key that created it: the gateway records each item
// id of a virtual key's stored answer (whole: in the write of the response's own row; streamed: as the item events
// pass), and the input items the provider would resolve by id (`item_reference`, with or without its type; a
// reasoning item without its encrypted content) must name the key's own items at that provider. Another tenant's
// item or a made-up id answers 404 before anything is sent or charged, in a request or inside a batch; gateway
// tokens are not checked; the owner store down is 503.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, pc } from './governance-helpers.ts';
import { expectRefused, failureOf, router, sdkFailure, usedBudget } from './referenced-files-helpers.ts';

let responsesFake: OpenAIFake;
let files: OpenAIFilesFake;
let chatOnly: OpenAIFake;
let upstream: FakeServer;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;
let aId: string;
let bId: string;
let bKey: string;

const MODEL = 'openai/gpt-4o-mini';
const onOpenAI = { headers: { 'x-model-provider': 'openai' } };

beforeAll(async () => {
  [responsesFake, files, chatOnly] = await Promise.all([
    createOpenAIFake().start(),
    createOpenAIFilesFake('/v1').start(),
    createOpenAIFake().start(),
  ]);
  upstream = await router((path) =>
    path.startsWith('/v1/files') || path.startsWith('/v1/batches') ? files.url : responsesFake.url,
  ).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-item-owners-aaaaaaaa', models: ['*'] }],
        },
        // No Responses API: served through its chat API (the bridge), which reads no item by id.
        deepseek: {
          network_config: { base_url: chatOnly.url, max_retries: 0 },
          keys: [{ id: 'ds', name: 'ds', value: 'sk-deepseek-item-owners-aaaaa', models: ['*'] }],
        },
      },
    },
  });
  // Priced, so a charge would show in a budget.
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0.001,
    output_cost_per_token: 0.001,
  });
  const budget = { budgets: [{ max_limit: 100, reset_duration: '1d' }] };
  const ka = await createVk(gw, { provider_configs: [pc('openai'), pc('deepseek')], ...budget });
  const kb = await createVk(gw, { provider_configs: [pc('openai')], ...budget });
  aId = ka.id;
  bId = kb.id;
  bKey = kb.value;
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  a = sdk(ka.value);
  b = sdk(kb.value);
  admin = sdk(INFERENCE_TOKEN);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([upstream?.stop(), responsesFake?.stop(), files?.stop(), chatOnly?.stop()]);
});

/** The owners recorded for output items, by id. */
async function itemOwners(ids: readonly string[]): Promise<Record<string, string>> {
  const { rows } = await gw.rt.state.db.query<{ resource_id: string; owner: string }>(
    `SELECT resource_id, owner FROM resource_owners WHERE kind = 'response_item' AND resource_id = ANY($1::text[])`,
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.resource_id, r.owner]));
}

/** A reasoning model's stored answer: a reasoning item, then the message. */
async function reasoned(client: OpenAI, input: string, store?: boolean) {
  const r = await client.responses.create({ model: MODEL, input, reasoning: { effort: 'low' }, store });
  const [rs, msg] = r.output.map((item) => item.id ?? '');
  expect(rs).toMatch(/^rs_/);
  expect(msg).toMatch(/^msg_/);
  return { response: r, rs: rs!, msg: msg! };
}

const reference = (id: string) => ({ type: 'item_reference' as const, id });
const byId = (rs: string) => ({ type: 'reasoning' as const, id: rs, summary: [] });
const ask = (...items: object[]) =>
  ({
    model: MODEL,
    input: [...items, { role: 'user', content: 'and then?' }],
  }) as OpenAI.Responses.ResponseCreateParamsNonStreaming;

/** The input the upstream received last. */
const sentInput = () => (responsesFake.last().json as Record<string, unknown>)['input'];

function refused(call: () => Promise<unknown>) {
  return () => failureOf(call(), sdkFailure);
}

describe('item_reference and id-only reasoning items', () => {
  it('let the owner name its own items; another key gets 404, nothing sent, nothing charged', async () => {
    const { rs, msg } = await reasoned(a, 'remember 42');
    // Recorded before the answer was sent, with the response's row.
    expect(await itemOwners([rs, msg])).toEqual({ [rs]: `vk:${aId}`, [msg]: `vk:${aId}` });

    const next = await a.responses.create(ask(byId(rs), reference(msg)));
    expect(next.status).toBe('completed');
    expect(sentInput()).toEqual([byId(rs), reference(msg), { role: 'user', content: 'and then?' }]);
    // The SDK's ItemReference may leave its type out.
    await a.responses.create(ask({ id: msg }));

    for (const [item, id] of [
      [reference(msg), msg],
      [{ id: msg }, msg],
      [byId(rs), rs],
    ] as const) {
      await expectRefused(
        gw,
        bId,
        [upstream],
        refused(() => b.responses.create(ask(item))),
        `response item ${id} not found`,
      );
    }
    // Streamed: refused before the stream starts.
    await expectRefused(
      gw,
      bId,
      [upstream],
      refused(() => b.responses.create({ ...ask(reference(msg)), stream: true })),
      `response item ${msg} not found`,
    );
    // Reasoning sent with its encrypted content reads nothing stored: not checked.
    const withContent = { ...byId(rs), encrypted_content: 'gAAAA-own-blob' };
    expect((await b.responses.create(ask(withContent))).status).toBe('completed');
  });

  it('answers 404 in the OpenAI error shape to a made-up id, which a gateway token passes on', async () => {
    const before = upstream.requests.length;
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask(reference('msg_madeup'))),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'not_found_error', message: 'response item msg_madeup not found' });
    expect(upstream.requests.length).toBe(before);

    // A gateway token is not checked: the provider answers for itself.
    const f = await failureOf(admin.responses.create(ask(reference('msg_madeup'))), sdkFailure);
    expect(f.status).toBe(404);
    expect(f.message).toContain("Item with id 'msg_madeup' not found");
    expect(upstream.requests.length).toBe(before + 1);
    // ...and reaches any tenant's items; its own answers' items are no virtual key's.
    const theirs = await reasoned(b, 'tenant b');
    expect((await admin.responses.create(ask(reference(theirs.msg)))).status).toBe('completed');
    const mine = await reasoned(admin, 'as the gateway');
    expect(await itemOwners([mine.rs, mine.msg])).toEqual({});
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(ask(reference(mine.msg)))),
      `response item ${mine.msg} not found`,
    );
  });

  it("records a streamed answer's items as their events pass; its owner names them, another key cannot", async () => {
    const stream = await a.responses.create({
      model: MODEL,
      input: 'stream it',
      reasoning: { effort: 'low' },
      stream: true,
    });
    const ids: string[] = [];
    for await (const ev of stream) {
      if (ev.type !== 'response.output_item.done') continue;
      ids.push(ev.item.id ?? '');
      // Written while the stream is still open (the event was not held for it).
      expect(await waitForOwner(ev.item.id ?? '')).toBe(`vk:${aId}`);
    }
    const [rs, msg] = ids;
    expect(rs).toMatch(/^rs_/);
    expect(msg).toMatch(/^msg_/);
    expect(await itemOwners(ids)).toEqual({ [rs!]: `vk:${aId}`, [msg!]: `vk:${aId}` });
    const next = await a.responses.create(ask(byId(rs!), reference(msg!)));
    expect(next.status).toBe('completed');
    await expectRefused(
      gw,
      bId,
      [upstream],
      refused(() => b.responses.create(ask(reference(msg!)))),
      `response item ${msg} not found`,
    );
  });

  it('records no items for store: false (their ids answer 404) nor for a bridged answer', async () => {
    const { rs, msg } = await reasoned(a, 'forget me', false);
    expect(await itemOwners([rs, msg])).toEqual({});
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(ask(reference(msg)))),
      `response item ${msg} not found`,
    );

    // The bridge reads no item by id (it drops reasoning items): a replayed one is not checked there.
    const before = chatOnly.requests.length;
    const bridged = await a.responses.create({
      model: 'deepseek/deepseek-chat',
      input: [byId('rs_from_elsewhere'), { role: 'user', content: 'hi' }],
    });
    expect(bridged.status).toBe('completed');
    expect(chatOnly.requests.length).toBe(before + 1);
    const bridgedIds = bridged.output.map((item) => item.id ?? '');
    expect(bridgedIds.length).toBeGreaterThan(0);
    expect(await itemOwners(bridgedIds)).toEqual({});
  });

  it('fails closed with 503 while the owner records cannot be read; items made meanwhile are no one’s', async () => {
    const { msg } = await reasoned(a, 'before the outage');
    const db = gw.rt.state.db;
    await db.query('ALTER TABLE resource_owners RENAME TO resource_owners_away');
    let during = '';
    try {
      const before = upstream.requests.length;
      const f = await failureOf(a.responses.create(ask(reference(msg))), sdkFailure);
      expect(f.status).toBe(503);
      expect(upstream.requests.length).toBe(before);
      // A new answer is still given; its records are lost (logged).
      during = (await reasoned(a, 'during the outage')).msg;
      // A gateway token is not checked, so it does not depend on the records.
      expect((await admin.responses.create(ask(reference(msg)))).status).toBe('completed');
    } finally {
      await db.query('ALTER TABLE resource_owners_away RENAME TO resource_owners');
    }
    expect((await a.responses.create(ask(reference(msg)))).status).toBe('completed');
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(ask(reference(during)))),
      `response item ${during} not found`,
    );
  });
});

describe('inside a batch', () => {
  const inline = (client: OpenAI, requests: object[]) =>
    client.batches.create({ endpoint: '/v1/responses', completion_window: '24h', requests } as never, onOpenAI);
  const line = (custom_id: string, ...items: object[]) => ({
    custom_id,
    body: { model: 'gpt-4o-mini', input: [...items, { role: 'user', content: 'go on' }] },
  });

  it("runs the owner's batch naming its items; another key's and a made-up id are 404 naming the request", async () => {
    const { rs, msg } = await reasoned(a, 'for the batch');
    files.batches.clear();
    const batch = await inline(a, [line('own', reference(msg), byId(rs))]);
    expect(batch.object).toBe('batch');
    expect(files.batches.size).toBe(1);

    files.batches.clear();
    const sent = upstream.requests.length;
    for (const [client, requests, message] of [
      [
        b,
        [line('first'), line('second', reference(msg))],
        `request 2 (custom_id "second"): response item ${msg} not found`,
      ],
      [a, [line('x', byId('rs_madeup'))], 'request 1 (custom_id "x"): response item rs_madeup not found'],
    ] as const) {
      const f = await failureOf(inline(client, [...requests]), sdkFailure);
      expect(f.status, f.message).toBe(404);
      expect(f.message).toContain(message);
    }
    expect(upstream.requests.length).toBe(sent);
    expect(files.batches.size).toBe(0);
  });
});

/**
 * Waits until a key's earlier answers are charged (the charge completes after the answer), so a refusal's check
 * that nothing was charged compares against the settled figure.
 */
async function settled(vkId: string): Promise<void> {
  const end = Date.now() + 5_000;
  let last = await usedBudget(gw, vkId);
  for (;;) {
    await new Promise((r) => setTimeout(r, 150));
    const now = await usedBudget(gw, vkId);
    if (now === last || Date.now() > end) return;
    last = now;
  }
}

async function waitForOwner(id: string): Promise<string | undefined> {
  const end = Date.now() + 5_000;
  for (;;) {
    const owner = (await itemOwners([id]))[id];
    if (owner || Date.now() > end) return owner;
    await new Promise((r) => setTimeout(r, 20));
  }
}
