import { describe, expect, it } from 'vitest';
import { batchRule, type ReferenceScope, readBatchInput } from '../../src/engine/batch-input.ts';
import { BatchReferences, lineReferences, MAX_BATCH_REFS } from '../../src/engine/batch-references.ts';
import type { ProviderConfig } from '../../src/governance/model.ts';
import { GatewayError } from '../../src/http/errors.ts';

const CHAT = '/v1/chat/completions';
const RESPONSES = '/v1/responses';

const filePart = (id: string) => ({ type: 'file', file: { file_id: id } });
const chatBody = (...ids: string[]) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: ids.map(filePart) }],
});
const chatLine = (custom_id: string, ...ids: string[]) => ({ custom_id, url: CHAT, body: chatBody(...ids) });

describe('the resources one batch request names', () => {
  it('reads an OpenAI line with the walker of its endpoint; embeddings name nothing', () => {
    expect(lineReferences(chatLine('a', 'file-1'), CHAT, 'openai')).toEqual([{ kind: 'file', id: 'file-1' }]);
    const responses = {
      custom_id: 'r',
      body: {
        model: 'gpt-4o',
        previous_response_id: 'resp_1',
        input: [
          { role: 'user', content: [{ type: 'input_file', file_id: 'file-2' }] },
          { type: 'item_reference', id: 'msg_1' },
        ],
        tools: [{ type: 'code_interpreter', container: 'cntr_1' }],
      },
    };
    expect(lineReferences(responses, RESPONSES, 'openai')).toEqual([
      { kind: 'response', id: 'resp_1' },
      { kind: 'file', id: 'file-2' },
      { kind: 'response_item', id: 'msg_1' },
      { kind: 'container', id: 'cntr_1' },
    ]);
    // The same body at the chat endpoint has no chat file parts.
    expect(lineReferences(responses, CHAT, 'openai')).toBeUndefined();
    const embedding = { custom_id: 'e', body: { model: 'x', input: [filePart('file-3')] } };
    expect(lineReferences(embedding, '/v1/embeddings', 'openai')).toBeUndefined();
  });

  it("reads a line whose url is not the batch's endpoint with both walkers", () => {
    const line = {
      custom_id: 'm',
      url: RESPONSES,
      body: { ...chatBody('file-chat'), previous_response_id: 'resp_9' },
    };
    expect(lineReferences(line, CHAT, 'openai')).toEqual([
      { kind: 'response', id: 'resp_9' },
      { kind: 'file', id: 'file-chat' },
    ]);
  });

  it("reads Anthropic's params with the Messages walker and OpenAI chat bodies with the chat walker", () => {
    const params = {
      model: 'claude',
      container: 'container_1',
      messages: [
        null,
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'file', file_id: 'file_011a' } },
            { type: 'tool_result', content: [{ type: 'container_upload', file_id: 'file_011b' }] },
          ],
        },
      ],
    };
    expect(lineReferences({ custom_id: 'p', params }, CHAT, 'anthropic')).toEqual([
      { kind: 'file', id: 'file_011a' },
      { kind: 'file', id: 'file_011b' },
      { kind: 'container', id: 'container_1' },
    ]);
    // A body at /v1/messages is Anthropic's own too.
    expect(lineReferences({ custom_id: 'b', body: params }, '/v1/messages', 'anthropic')).toHaveLength(3);
    expect(lineReferences(chatLine('c', 'file_011c'), CHAT, 'anthropic')).toEqual([{ kind: 'file', id: 'file_011c' }]);
  });

  it("reads Gemini's params and input file lines with the Gemini walker", () => {
    const request = { contents: [{ role: 'user', parts: [{ fileData: { fileUri: 'files/abc' } }] }] };
    expect(lineReferences({ custom_id: 'g', params: request }, CHAT, 'genai')).toEqual([
      { kind: 'file', id: 'files/abc' },
    ]);
    expect(lineReferences({ key: 'k', request }, CHAT, 'genai')).toEqual([{ kind: 'file', id: 'files/abc' }]);
    expect(lineReferences(chatLine('c', 'files/def'), CHAT, 'genai')).toEqual([{ kind: 'file', id: 'files/def' }]);
  });

  it('names nothing, without failing, for lines of any other shape', () => {
    for (const line of [
      { custom_id: 'a' },
      { custom_id: 'a', body: { messages: 'hi' } },
      { custom_id: 'a', body: { messages: [null, 3, { content: [null, 'x', { type: 'file' }] }] } },
      { custom_id: 'a', body: ['x'] },
      { custom_id: 'a', params: 'x' },
    ]) {
      for (const dialect of ['openai', 'anthropic', 'genai'] as const) {
        expect(lineReferences(line as never, CHAT, dialect) ?? []).toEqual([]);
      }
    }
  });
});

describe('the resources of a whole batch', () => {
  it('keeps each resource once, as recorded, with the first request naming it', () => {
    const refs = new BatchReferences('requests');
    refs.add({ custom_id: 'a' }, 1, [{ kind: 'file', id: 'files/abc' }]);
    refs.add({ custom_id: 'b' }, 2, [
      { kind: 'file', id: 'abc' },
      { kind: 'file', id: 'file-2' },
      { kind: 'container', id: 'file-2' },
    ]);
    expect(refs.entries()).toEqual([
      { ref: { kind: 'file', id: 'files/abc' }, where: 'request 1 (custom_id "a")' },
      { ref: { kind: 'file', id: 'file-2' }, where: 'request 2 (custom_id "b")' },
      { ref: { kind: 'container', id: 'file-2' }, where: 'request 2 (custom_id "b")' },
    ]);
  });

  it('refuses a batch naming too many distinct resources with 400 naming the request; repeats do not count', () => {
    const refs = new BatchReferences('input_file_id');
    const ids = Array.from({ length: MAX_BATCH_REFS }, (_, i) => ({ kind: 'file', id: `file-${i}` }));
    refs.add({ custom_id: 'a' }, 1, ids);
    refs.add({ custom_id: 'b' }, 2, ids);
    const err = (() => {
      try {
        refs.add({ custom_id: 'c' }, 3, [{ kind: 'file', id: 'file-new' }]);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).param).toBe('input_file_id');
    expect((err as GatewayError).message).toContain(
      `request 3 (custom_id "c"): the batch names more than ${MAX_BATCH_REFS}`,
    );
  });
});

describe('one read of the input for both checks', () => {
  const scope: ReferenceScope = { endpoint: CHAT, dialect: 'openai', readsInputFile: true };
  const file = (text: string) => {
    const reader = async () =>
      (async function* () {
        reader.reads++;
        yield Buffer.from(text);
      })();
    reader.reads = 0;
    return reader;
  };
  const jsonl = (...lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

  it("collects an input file's references when no models rule applies", async () => {
    const read = file(jsonl(chatLine('a', 'file-1'), chatLine('b', 'file-1', 'file-2')));
    const refs = await readBatchInput({ input_file_id: 'f' }, { references: scope }, read, 1024);
    expect(read.reads).toBe(1);
    expect(refs?.param).toBe('input_file_id');
    expect(refs?.entries().map((e) => [e.ref.id, e.where])).toEqual([
      ['file-1', 'request 1 (custom_id "a")'],
      ['file-2', 'request 2 (custom_id "b")'],
    ]);
  });

  it('reads the file once for the models rule and the references, the rule refusing first', async () => {
    const pc = {
      id: 'pc',
      provider: 'openai',
      allowed_models: ['gpt-4o-mini'],
      key_ids: ['*'],
      weight: 1,
      rate_limit: null,
      budgets: [],
    } satisfies ProviderConfig;
    const rule = batchRule('team', pc, { endpoint: CHAT })!;
    const ok = file(jsonl(chatLine('a', 'file-1')));
    const refs = await readBatchInput({ input_file_id: 'f' }, { rule, references: scope }, ok, 1024);
    expect(ok.reads).toBe(1);
    expect(refs?.size).toBe(1);
    const denied = { custom_id: 'z', body: { ...chatBody('file-9'), model: 'o3' } };
    const err = await readBatchInput({ input_file_id: 'f' }, { rule, references: scope }, file(jsonl(denied)), 1024)
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect((err as GatewayError).status).toBe(403);
    expect((err as GatewayError).message).toContain('request 1 (custom_id "z") names model o3');
  });

  it('does not read a file the provider cannot serve back unless the models rule needs it', async () => {
    const read = file(jsonl(chatLine('a', 'file-1')));
    const unreadable = { ...scope, readsInputFile: false };
    expect(await readBatchInput({ input_file_id: 'f' }, { references: unreadable }, read, 1024)).toBeUndefined();
    expect(await readBatchInput({ input_file_id: 'f' }, { references: scope }, undefined, 1024)).toBeUndefined();
    expect(read.reads).toBe(0);
  });

  it('collects inline requests, pointing refusals at requests', async () => {
    const refs = await readBatchInput({ requests: [chatLine('a', 'file-1')] }, { references: scope }, undefined, 1024);
    expect(refs?.param).toBe('requests');
    expect(refs?.entries()).toEqual([{ ref: { kind: 'file', id: 'file-1' }, where: 'request 1 (custom_id "a")' }]);
  });
});
