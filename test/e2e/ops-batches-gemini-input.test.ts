// The lines of a virtual key's Gemini batch input file are held to its own files where the gateway sees them:
// the upload. With the openai SDK (the gateway serves Gemini files and batches in OpenAI's shapes) against a
// fake of Google's Files API (resumable uploads) and batch mode: a key's JSONL naming only its own files is
// recorded as its batch input and runs; one naming another tenant's or a made-up file is refused with 404
// naming the line before the upload is finalized (the session cancelled, nothing kept upstream); a huge line
// is 400, the owner store down 503; a batch from a file not checked so (uploaded before, not JSONL of
// requests, another media type) is refused with 400; gateway tokens are neither read nor checked.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGeminiBatchesFake, type GeminiBatchesFake } from '../fakes/gemini-batches.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { createVk, logOf, pc } from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let gemini: GeminiBatchesFake;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;
let aId: string;

const on = { headers: { 'x-model-provider': 'gemini' } };
const MODEL = 'gemini-2.5-flash';
/** network_config.max_response_size_mb: the longest line of a batch input the gateway reads (64 KiB). */
const LINE_MB = 1 / 16;

beforeAll(async () => {
  gemini = await createGeminiBatchesFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        gemini: {
          network_config: { base_url: gemini.url, max_retries: 0, max_response_size_mb: LINE_MB },
          keys: [{ id: 'gm', name: 'gm', value: 'gemini-input-key-aaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  const ka = await createVk(gw, { provider_configs: [pc('gemini')] });
  const kb = await createVk(gw, { provider_configs: [pc('gemini')] });
  aId = ka.id;
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  a = sdk(ka.value);
  b = sdk(kb.value);
  admin = sdk(INFERENCE_TOKEN);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await gemini?.stop();
});
beforeEach(() => {
  gemini.reset();
  gemini.batches.clear();
});

type Part = Record<string, unknown>;
const fileData = (uri: string): Part => ({ fileData: { fileUri: uri, mimeType: 'image/png' } });
const line = (key: string, ...parts: Part[]) => ({
  key,
  request: { contents: [{ role: 'user', parts: [{ text: `about ${key}` }, ...parts] }] },
});
const jsonl = (...lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

async function upload(client: OpenAI, name: string, content: string | Buffer, type?: string) {
  const file = await toFile(Buffer.from(content), name, type ? { type } : undefined);
  return client.files.create({ file, purpose: 'batch' }, on);
}

const image = (client: OpenAI) => upload(client, 'pic.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2]), 'image/png');

const fromFile = (client: OpenAI, input_file_id: string) =>
  client.batches.create(
    { model: `gemini/${MODEL}`, input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' } as never,
    {},
  );

/** The owner rows of a Gemini file, as `kind owner`. */
async function rows(fileId: string): Promise<string[]> {
  const { rows } = await gw.rt.state.db.query<{ kind: string; owner: string }>(
    `SELECT kind, owner FROM resource_owners WHERE provider = 'gemini' AND resource_id = $1 ORDER BY kind`,
    [fileId.replace(/^files\//, '')],
  );
  return rows.map((r) => `${r.kind} ${r.owner}`);
}

const commands = () => gemini.requests.map((r) => r.headers['x-goog-upload-command']).filter(Boolean);

/** An upload refused with `status`: never finalized, its session cancelled, no file kept upstream. */
async function refusedUpload(call: Promise<unknown>, status: number, ...parts: string[]) {
  const before = gemini.files.size;
  const err = await apiFailure(call);
  expect(err.status, err.message).toBe(status);
  for (const part of parts) expect(err.message).toContain(part);
  expect(commands()).not.toContain('upload, finalize');
  expect(commands()).toContain('cancel');
  expect(gemini.files.size).toBe(before);
  return err;
}

describe("a virtual key's batch input upload", () => {
  it('records a file naming only its own files as its batch input, and the batch runs', async () => {
    const mine = await image(a);
    const uri = (mine as unknown as { uri: string }).uri;
    const snake = { key: 'z', request: { contents: [{ parts: [{ file_data: { file_uri: mine.id } }] }] } };
    const text = jsonl(line('x', fileData(mine.id)), line('y', fileData(uri)), snake);
    const input = await upload(a, 'in.jsonl', text);
    expect(gemini.files.get(input.id)?.content.toString()).toBe(text);
    expect(await rows(input.id)).toEqual([`batch_input vk:${aId}`, `file vk:${aId}`]);

    const batch = await fromFile(a, input.id);
    expect(batch.object).toBe('batch');
    expect(gemini.batches.size).toBe(1);
    expect((gemini.last().json as { batch: { inputConfig: unknown } }).batch.inputConfig).toEqual({
      fileName: input.id,
    });
    // Another key may not run it: the file is not its own.
    expect((await apiFailure(fromFile(b, input.id))).status).toBe(404);
  });

  it("refuses a line naming another tenant's file with 404 naming the line, before the file is made", async () => {
    const theirs = await image(b);
    gemini.reset();
    const err = await refusedUpload(
      upload(a, 'in.jsonl', jsonl(line('a'), line('b', fileData(theirs.id)))),
      404,
      `line 2 (key "b"): file ${theirs.id} not found`,
    );
    const row = await logOf(gw, err.headers?.get('x-gateway-request-id'));
    expect(row).toMatchObject({ request_type: 'file_upload', status_code: 404, virtual_key_id: aId });
    expect(row['cost_nano'] ?? 0).toBe(0);
    // Under its proto name and as a URI, under a jsonl media type and any file name.
    const uri = (theirs as unknown as { uri: string }).uri;
    const snake = { key: 's', request: { contents: [{ parts: [{ file_data: { file_uri: uri } }] }] } };
    gemini.reset();
    await refusedUpload(upload(a, 'requests', jsonl(snake), 'jsonl'), 404, `line 1 (key "s"): file ${theirs.id}`);
  });

  it('refuses a made-up file', async () => {
    await refusedUpload(
      upload(a, 'in.jsonl', jsonl(line('m', fileData('files/madeup')))),
      404,
      'line 1 (key "m"): file files/madeup not found',
    );
  });

  it('reads a large file as it streams: the chunks before the refused line are sent, then cancelled', async () => {
    const theirs = await image(b);
    gemini.reset();
    const filler = JSON.stringify(line('f', { text: 'x'.repeat(4000) }));
    const lines = Array.from({ length: 2400 }, () => filler); // about 9.4 MiB
    const text = `${lines.join('\n')}\n${JSON.stringify(line('last', fileData(theirs.id)))}\n`;
    await refusedUpload(upload(a, 'big.jsonl', text), 404, `line 2401 (key "last"): file ${theirs.id} not found`);
    expect(commands()).toEqual(['start', 'upload', 'cancel']);
  });

  it('refuses a line longer than the bound with 400', async () => {
    const huge = line('h', { text: 'y'.repeat(100 * 1024) });
    await refusedUpload(
      upload(a, 'in.jsonl', jsonl(line('a'), huge)),
      400,
      'line 2 of this JSONL file is longer than 65536 bytes',
    );
  });

  it('refuses more than 10,000 distinct files with 400 naming the line', async () => {
    const many = Array.from({ length: 201 }, (_, i) =>
      line(`k${i}`, ...Array.from({ length: 50 }, (_, j) => fileData(`files/many${i}x${j}`))),
    );
    await refusedUpload(upload(a, 'in.jsonl', jsonl(...many)), 400, 'line 201 (key "k200")', 'more than 10000');
  });

  it('fails closed with 503 while the owner records cannot be read', async () => {
    const mine = await image(a);
    gemini.reset();
    const db = gw.rt.state.db;
    await db.query('ALTER TABLE resource_owners RENAME TO resource_owners_away');
    try {
      await refusedUpload(upload(a, 'in.jsonl', jsonl(line('a', fileData(mine.id)))), 503);
    } finally {
      await db.query('ALTER TABLE resource_owners_away RENAME TO resource_owners');
    }
  });

  it('passes other uploads through unread: another media type, and JSONL that is not requests', async () => {
    const theirs = await image(b);
    // Bytes that would be refused as a batch input, sent as a text file.
    const text = jsonl(line('a', fileData(theirs.id)));
    const notes = await upload(a, 'notes.txt', text, 'text/plain');
    expect(gemini.files.get(notes.id)?.content.toString()).toBe(text);
    expect(await rows(notes.id)).toEqual([`file vk:${aId}`]);
    const png = await image(a);
    expect(await rows(png.id)).toEqual([`file vk:${aId}`]);
    const other = await upload(a, 'data.jsonl', jsonl({ prompt: 'hi' }, line('b', fileData(theirs.id))));
    expect(await rows(other.id)).toEqual([`file vk:${aId}`]);
    expect(commands()).not.toContain('cancel');
  });

  it('forgets the batch input with its file', async () => {
    const input = await upload(a, 'in.jsonl', jsonl(line('a')));
    expect(await rows(input.id)).toHaveLength(2);
    await a.files.delete(input.id, on);
    expect(await rows(input.id)).toEqual([]);
  });
});

describe("a virtual key's batch from an input file", () => {
  const notChecked = 'was not checked as a batch input when it was uploaded';

  async function refusedBatch(client: OpenAI, id: string, status: number, part?: string) {
    const err = await apiFailure(fromFile(client, id));
    expect(err.status, err.message).toBe(status);
    if (part) expect(err.message).toContain(part);
    expect(gemini.batches.size).toBe(0);
    expect(gemini.requests.some((r) => r.path.endsWith(':batchGenerateContent'))).toBe(false);
    return err;
  }

  it('is refused with 400 for its own file that was not checked: uploaded before, or not a batch input', async () => {
    // A file uploaded before the check existed has its file row only.
    const before = await upload(a, 'in.jsonl', jsonl(line('a')));
    await gw.rt.state.db.query(`DELETE FROM resource_owners WHERE kind = 'batch_input' AND resource_id = $1`, [
      before.id.replace(/^files\//, ''),
    ]);
    gemini.reset();
    const err = await refusedBatch(a, before.id, 400, notChecked);
    const row = await logOf(gw, err.headers?.get('x-gateway-request-id'));
    expect(row).toMatchObject({ request_type: 'batch_create', status_code: 400 });
    expect(row['cost_nano'] ?? 0).toBe(0);

    const text = await upload(a, 'notes.txt', jsonl(line('a')), 'text/plain');
    await refusedBatch(a, text.id, 400, notChecked);
    const prompts = await upload(a, 'p.jsonl', jsonl({ prompt: 'hi' }));
    await refusedBatch(a, prompts.id, 400, notChecked);
  });

  it("a gateway token's upload is not read and its batch not checked; a key cannot run that file", async () => {
    const theirs = await image(b);
    const input = await upload(admin, 'in.jsonl', jsonl(line('a', fileData(theirs.id))));
    expect(await rows(input.id)).toEqual(['file gateway']);
    await refusedBatch(a, input.id, 404);
    expect((await fromFile(admin, input.id)).object).toBe('batch');
  });

  it("refuses inline Gemini params naming another tenant's file under its proto name", async () => {
    const theirs = await image(b);
    const params = { contents: [{ role: 'user', parts: [{ file_data: { file_uri: theirs.id } }] }] };
    const err = await apiFailure(
      a.batches.create(
        { model: `gemini/${MODEL}`, completion_window: '24h', requests: [{ custom_id: 'p', params }] } as never,
        {},
      ),
    );
    expect(err.status).toBe(404);
    expect(err.message).toContain(`request 1 (custom_id "p"): file ${theirs.id} not found`);
    expect(gemini.batches.size).toBe(0);
  });
});
