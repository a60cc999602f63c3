// Stored Responses belong to the virtual key that created them: the gateway records the owner of each response a
// virtual key makes through POST /v1/responses (whole or streamed, unless `store: false`), and a
// `previous_response_id` of a virtual key must name one of its own at that provider. Another tenant's id (or one
// made outside the gateway) answers 404 before anything is sent or charged; gateway tokens are not checked.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, pc } from './governance-helpers.ts';
import { expectRefused, failureOf, sdkFailure, usedBudget } from './referenced-files-helpers.ts';

let upstream: OpenAIFake;
let chatOnly: OpenAIFake;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;
let aId: string;
let bId: string;
let bKey: string;

const MODEL = 'openai/gpt-4o-mini';

beforeAll(async () => {
  [upstream, chatOnly] = await Promise.all([createOpenAIFake().start(), createOpenAIFake().start()]);
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-responses-owners-aaaa', models: ['*'] }],
        },
        // No Responses API: served through its chat API (the bridge).
        deepseek: {
          network_config: { base_url: chatOnly.url, max_retries: 0 },
          keys: [{ id: 'ds', name: 'ds', value: 'sk-deepseek-responses-owners-aa', models: ['*'] }],
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
  await Promise.all([upstream?.stop(), chatOnly?.stop()]);
});

/** The owner row of a stored response, as the gateway recorded it. */
async function ownerRow(id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await gw.rt.state.db.query<Record<string, unknown>>(
    `SELECT provider, owner, virtual_key_id, key_id FROM resource_owners WHERE kind = 'response' AND resource_id = $1`,
    [id],
  );
  return rows[0];
}

const follow = (previous: string, model = MODEL) => ({ model, input: 'and then?', previous_response_id: previous });

/** The previous_response_id the upstream received last. */
const sentPrevious = () => (upstream.last().json as Record<string, unknown>)['previous_response_id'];

function refused(call: () => Promise<unknown>) {
  return () => failureOf(call(), sdkFailure);
}

describe('previous_response_id', () => {
  it("continues the owner's response; another key gets 404, nothing sent, nothing charged", async () => {
    const first = await a.responses.create({ model: MODEL, input: 'remember 42' });
    // Recorded before the answer was sent: the follow-up may come at once.
    expect(await ownerRow(first.id)).toEqual({
      provider: 'openai',
      owner: `vk:${aId}`,
      virtual_key_id: aId,
      key_id: 'oa',
    });

    const next = await a.responses.create(follow(first.id));
    expect(next.status).toBe('completed');
    expect(sentPrevious()).toBe(first.id);
    // The continuation is stored too, and continues in turn.
    await a.responses.create(follow(next.id));

    await expectRefused(
      gw,
      bId,
      [upstream],
      refused(() => b.responses.create(follow(first.id))),
      `response ${first.id} not found`,
    );
    // Streamed: refused before the stream starts, in the same shape.
    await expectRefused(
      gw,
      bId,
      [upstream],
      refused(() => b.responses.create({ ...follow(first.id), stream: true })),
      `response ${first.id} not found`,
    );
  });

  it('answers 404 in the OpenAI error shape to a made-up id, which a gateway token passes on', async () => {
    const before = upstream.requests.length;
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(follow('resp_madeup')),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'not_found_error', message: 'response resp_madeup not found' });
    expect(upstream.requests.length).toBe(before);

    // A gateway token is not checked: the provider answers for itself.
    const f = await failureOf(admin.responses.create(follow('resp_madeup')), sdkFailure);
    expect(f.status).toBe(404);
    expect(f.message).toContain("Previous response with id 'resp_madeup' not found");
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('refuses a stored conversation to a virtual key (none is created through the gateway); a token passes it on', async () => {
    const before = upstream.requests.length;
    for (const conversation of ['conv_elsewhere', { id: 'conv_elsewhere' }]) {
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: 'join it', conversation }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        'conversation conv_elsewhere not found',
      );
    }
    expect(upstream.requests.length).toBe(before);
    await admin.responses
      .create({ model: MODEL, input: 'join it', conversation: 'conv_elsewhere' })
      .catch(() => undefined);
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('records nothing for a response made with store: false; its follow-up is 404', async () => {
    const first = await a.responses.create({ model: MODEL, input: 'forget me', store: false });
    expect(await ownerRow(first.id)).toBeUndefined();
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(follow(first.id))),
      `response ${first.id} not found`,
    );
  });

  it('records a streamed response when its response.created event passes; its owner continues it', async () => {
    const stream = await a.responses.create({ model: MODEL, input: 'stream it', stream: true });
    let id: string | undefined;
    for await (const ev of stream) {
      if (ev.type !== 'response.created') continue;
      id = ev.response.id;
      // Written while the stream is still open (the event was not held for it).
      expect(await waitForRow(id)).toMatchObject({ owner: `vk:${aId}`, key_id: 'oa' });
    }
    expect(id).toMatch(/^resp_/);
    const next = await a.responses.create(follow(id!));
    expect(next.status).toBe('completed');
    expect(sentPrevious()).toBe(id);
    // A streamed continuation of it works as well; another key's is refused.
    const again = await a.responses.create({ ...follow(id!), stream: true });
    for await (const _ of again);
    await expectRefused(
      gw,
      bId,
      [upstream],
      refused(() => b.responses.create(follow(id!))),
      `response ${id} not found`,
    );
  });

  it("leaves gateway tokens unchanged: nothing recorded for theirs, any tenant's continued", async () => {
    const mine = await admin.responses.create({ model: MODEL, input: 'as the gateway' });
    expect(await ownerRow(mine.id)).toBeUndefined();
    await admin.responses.create(follow(mine.id));
    expect(sentPrevious()).toBe(mine.id);

    const theirs = await a.responses.create({ model: MODEL, input: 'tenant a' });
    await admin.responses.create(follow(theirs.id));
    expect(sentPrevious()).toBe(theirs.id);
    // ...and a gateway token's response is no virtual key's.
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(follow(mine.id))),
      `response ${mine.id} not found`,
    );
  });

  it('keeps the chat bridge refusing previous_response_id (a virtual key: no such response at that provider)', async () => {
    const own = await a.responses.create({ model: MODEL, input: 'at openai' });
    const before = chatOnly.requests.length;
    const onBridge = follow(own.id, 'deepseek/deepseek-chat');
    // Recorded at openai, not at deepseek.
    const vk = await failureOf(a.responses.create(onBridge), sdkFailure);
    expect(vk.status).toBe(404);
    expect(vk.message).toContain(`response ${own.id} not found`);
    const token = await failureOf(admin.responses.create(onBridge), sdkFailure);
    expect(token.status).toBe(400);
    expect(token.message).toContain('previous_response_id');
    expect(chatOnly.requests.length).toBe(before);
    // A bridged answer's id is the gateway's own, stored nowhere: not recorded.
    const bridged = await a.responses.create({ model: 'deepseek/deepseek-chat', input: 'hi' });
    expect(await ownerRow(bridged.id)).toBeUndefined();
  });

  it('fails closed while the owner records cannot be read or written', async () => {
    const first = await a.responses.create({ model: MODEL, input: 'before the outage' });
    const db = gw.rt.state.db;
    await db.query('ALTER TABLE resource_owners RENAME TO resource_owners_away');
    let during = '';
    try {
      const before = upstream.requests.length;
      const f = await failureOf(a.responses.create(follow(first.id)), sdkFailure);
      expect(f.status).toBe(503);
      expect(upstream.requests.length).toBe(before);
      // A new response is still answered; its record is lost (logged).
      during = (await a.responses.create({ model: MODEL, input: 'during the outage' })).id;
      // A gateway token is not checked, so it does not depend on the records.
      await admin.responses.create(follow(first.id));
      expect(sentPrevious()).toBe(first.id);
    } finally {
      await db.query('ALTER TABLE resource_owners_away RENAME TO resource_owners');
    }
    await a.responses.create(follow(first.id));
    // The response made while the records were down answers 404 even to its creator.
    await settled(aId);
    await expectRefused(
      gw,
      aId,
      [upstream],
      refused(() => a.responses.create(follow(during))),
      `response ${during} not found`,
    );
  });
});

/**
 * Waits until a key's earlier answers are charged (the charge completes after the answer), so a refusal's
 * check that nothing was charged compares against the settled figure.
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

async function waitForRow(id: string): Promise<Record<string, unknown> | undefined> {
  const end = Date.now() + 5_000;
  for (;;) {
    const row = await ownerRow(id);
    if (row || Date.now() > end) return row;
    await new Promise((r) => setTimeout(r, 20));
  }
}
