// The resources the requests of a batch name (chat file parts, Responses input files and previous responses,
// Anthropic document sources) are held to the virtual key creating the batch, as inference requests are: with
// the openai SDK against fakes of OpenAI's and Anthropic's Files and Batches APIs, another tenant's or a made-up
// id, inline or in a line of the input file (read back from the provider), is 404 naming the request before any
// batch exists at the provider; gateway tokens are not checked; the owner store down is 503.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicBatchesFake, createAnthropicBatchesFake } from '../fakes/anthropic-batches.ts';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { createVk, logOf, pc } from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let openai: OpenAIFilesFake;
let anthropic: AnthropicBatchesFake;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;
let aId: string;

const onOpenAI = { headers: { 'x-model-provider': 'openai' } };
const onAnthropic = { headers: { 'x-model-provider': 'anthropic' } };
const CHAT = '/v1/chat/completions';

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([createOpenAIFilesFake('/v1').start(), createAnthropicBatchesFake().start()]);
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-batch-refs-aaaaaaaa', models: ['*'] }],
        },
        anthropic: {
          network_config: { base_url: anthropic.url, max_retries: 0 },
          keys: [{ id: 'an', name: 'an', value: 'sk-ant-batch-refs-aaaaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  // Both keys allow every model: the input file is read for its references alone.
  const ka = await createVk(gw, { provider_configs: [pc('openai'), pc('anthropic')] });
  const kb = await createVk(gw, { provider_configs: [pc('openai'), pc('anthropic')] });
  aId = ka.id;
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  a = sdk(ka.value);
  b = sdk(kb.value);
  admin = sdk(INFERENCE_TOKEN);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.stop(), anthropic?.stop()]);
});
beforeEach(() => {
  openai.reset();
  openai.batches.clear();
  anthropic.reset();
  anthropic.batches.clear();
});

const filePart = (id: string) => ({ type: 'file', file: { file_id: id } });
const chatBody = (...ids: string[]) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'read it' }, ...ids.map(filePart)] }],
});
const request = (custom_id: string, ...ids: string[]) => ({
  custom_id,
  method: 'POST',
  url: CHAT,
  body: chatBody(...ids),
});
const jsonl = (...lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

async function upload(client: OpenAI, text: string, on = onOpenAI): Promise<string> {
  const purpose = on === onOpenAI ? 'batch' : 'user_data';
  return (await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose }, on)).id;
}

const inline = (client: OpenAI, requests: object[], endpoint = CHAT) =>
  client.batches.create({ endpoint, completion_window: '24h', requests } as never, onOpenAI);
const fromFile = (client: OpenAI, input_file_id: string) =>
  client.batches.create({ input_file_id, endpoint: CHAT, completion_window: '24h' }, onOpenAI);

/** A refusal that left the provider without a batch (and, when given, without any request after `sent`). */
async function refused(call: Promise<unknown>, status: number, ...parts: string[]): Promise<void> {
  const err = await apiFailure(call);
  expect(err.status, err.message).toBe(status);
  for (const part of parts) expect(err.message).toContain(part);
  expect(openai.batches.size).toBe(0);
}

describe('inline requests', () => {
  it("refuses another tenant's file with 404 naming the request: nothing uploaded, no batch, logged", async () => {
    const theirs = await upload(b, 'secret of b');
    const mine = await upload(a, 'mine');
    const sent = openai.requests.length;
    const err = await apiFailure(inline(a, [request('first', mine), request('second', mine, theirs)]));
    expect(err.status).toBe(404);
    expect(err.message).toContain(`request 2 (custom_id "second"): file ${theirs} not found`);
    expect(openai.requests.length).toBe(sent);
    expect(openai.batches.size).toBe(0);
    const row = await logOf(gw, err.headers?.get('x-gateway-request-id') ?? null);
    expect(row).toMatchObject({ request_type: 'batch_create', status_code: 404, virtual_key_id: aId });
    expect(row['cost_nano'] ?? 0).toBe(0);
  });

  it('runs a batch naming only its own files', async () => {
    const mine = await upload(a, 'mine');
    const batch = await inline(a, [request('x', mine), request('y', mine)]);
    expect(batch.object).toBe('batch');
    expect(openai.batches.size).toBe(1);
  });

  it('refuses made-up ids: a file, a previous response, a container', async () => {
    await refused(
      inline(a, [request('x', 'file-madeup')]),
      404,
      'request 1 (custom_id "x"): file file-madeup not found',
    );
    const responses = {
      custom_id: 'r',
      body: { model: 'gpt-4o-mini', input: 'hi', previous_response_id: 'resp_madeup' },
    };
    await refused(inline(a, [responses], '/v1/responses'), 404, 'response resp_madeup not found');
    const tool = {
      custom_id: 't',
      body: { model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'code_interpreter', container: 'cntr_madeup' }] },
    };
    await refused(inline(a, [tool], '/v1/responses'), 404, 'container cntr_madeup not found');
  });

  it('does not check a gateway token', async () => {
    const theirs = await upload(b, 'secret of b');
    expect((await inline(admin, [request('x', theirs)])).object).toBe('batch');
    expect(openai.batches.size).toBe(1);
  });

  it('refuses a batch naming more than 10,000 distinct ids with 400, before reading owners', async () => {
    const ids = Array.from({ length: 10_001 }, (_, i) => `file-many-${i}`);
    await refused(
      inline(a, [request('big', ...ids.slice(0, 5_000)), request('more', ...ids.slice(5_000))]),
      400,
      'request 2 (custom_id "more")',
      'more than 10000 distinct',
    );
  });

  it('fails closed with 503 while the owner records cannot be read', async () => {
    const mine = await upload(a, 'mine');
    const db = gw.rt.state.db;
    await db.query('ALTER TABLE resource_owners RENAME TO resource_owners_away');
    try {
      const sent = openai.requests.length;
      await refused(inline(a, [request('x', mine)]), 503);
      expect(openai.requests.length).toBe(sent);
      // A batch naming nothing does not need them.
      expect((await inline(a, [{ custom_id: 'plain', body: chatBody() }])).object).toBe('batch');
    } finally {
      await db.query('ALTER TABLE resource_owners_away RENAME TO resource_owners');
    }
  });
});

describe('the lines of an input file', () => {
  it("reads the file of a key allowing every model and refuses a line naming another tenant's file", async () => {
    const theirs = await upload(b, 'secret of b');
    const file = await upload(a, jsonl(request('a'), request('b', theirs)));
    await refused(fromFile(a, file), 404, `request 2 (custom_id "b"): file ${theirs} not found`);
    expect(openai.requests.some((r) => r.path === `/v1/files/${file}/content`)).toBe(true);
  });

  it('runs a file naming only its own files, read once', async () => {
    const mine = await upload(a, 'mine');
    const file = await upload(a, jsonl(request('a', mine), request('b', mine)));
    expect((await fromFile(a, file)).object).toBe('batch');
    expect(openai.requests.filter((r) => r.path === `/v1/files/${file}/content`)).toHaveLength(1);
  });

  it("does not read a gateway token's input file", async () => {
    const theirs = await upload(b, 'secret of b');
    const file = await upload(admin, jsonl(request('a', theirs)));
    expect((await fromFile(admin, file)).object).toBe('batch');
    expect(openai.requests.some((r) => r.path.endsWith('/content'))).toBe(false);
  });
});

describe("Anthropic's own requests", () => {
  const params = (fileId: string) => ({
    model: 'claude-test',
    max_tokens: 20,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'file', file_id: fileId } },
          { type: 'text', text: 'sum' },
        ],
      },
    ],
  });
  const create = (client: OpenAI, fileId: string) =>
    client.batches.create(
      { completion_window: '24h', requests: [{ custom_id: 'n', params: params(fileId) }] } as never,
      onAnthropic,
    );

  it("refuses another tenant's document with 404 and runs the caller's own", async () => {
    const theirs = await upload(b, 'secret of b', onAnthropic);
    const mine = await upload(a, 'mine', onAnthropic);
    const err = await apiFailure(create(a, theirs));
    expect(err.status).toBe(404);
    expect(err.message).toContain(`request 1 (custom_id "n"): file ${theirs} not found`);
    expect(anthropic.batches.size).toBe(0);
    expect((await create(a, mine)).object).toBe('batch');
    expect(anthropic.batches.size).toBe(1);
  });
});
