// What an inference request names at the provider: every known place of each body the engine runs, nothing
// from anywhere else (text that merely looks like an id, public URLs), and undefined (nothing allocated) when a
// request names nothing.
import { describe, expect, it } from 'vitest';
import { chatOp, countTokensOp, responsesOp } from '../../src/engine/operations.ts';
import { ocrOp } from '../../src/engine/ops/ocr.ts';
import { videoCreateOp, videoRemixOp } from '../../src/engine/ops/videos.ts';
import {
  chatReferences,
  genaiReferences,
  messagesReferences,
  ocrReferences,
  responsesReferences,
  videoCreateReferences,
  videoRemixReferences,
} from '../../src/engine/referenced-resources.ts';
import { messagesSpec } from '../../src/formats/anthropic/operations.ts';
import { modelsCallSpec } from '../../src/formats/genai/operations.ts';

const file = (id: string) => ({ kind: 'file', id });
const container = (id: string) => ({ kind: 'container', id });
const response = (id: string) => ({ kind: 'response', id });

describe('chat', () => {
  it('reads file parts of every message, and nothing else', () => {
    expect(
      chatReferences({
        messages: [
          { role: 'system', content: 'file_id: file-not-a-part' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'read these' },
              { type: 'file', file: { file_id: 'file-a' } },
              { type: 'file', file: { file_data: 'data:application/pdf;base64,AA', filename: 'x.pdf' } },
              { type: 'image_url', image_url: { url: 'https://example.com/file-b.png' } },
            ],
          },
          { role: 'tool', tool_call_id: 't', content: [{ type: 'file', file: { file_id: 'file-c' } }] },
        ],
      }),
    ).toEqual([file('file-a'), file('file-c')]);
  });

  it('names nothing for plain text, an empty id or a URL; a Gemini file URI is its files/<id>', () => {
    expect(chatReferences({ messages: [{ role: 'user', content: 'hi' }] })).toBeUndefined();
    expect(
      chatReferences({
        messages: [
          {
            content: [
              { type: 'file', file: { file_id: '' } },
              { type: 'file', file: { file_id: 'https://www.youtube.com/watch?v=abc' } },
              { type: 'file', file: { file_id: 'gs://bucket/doc.pdf' } },
            ],
          },
        ],
      }),
    ).toBeUndefined();
    expect(
      chatReferences({
        messages: [
          {
            content: [
              { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc123' } },
              { type: 'file', file: { file_id: 'files/def' } },
            ],
          },
        ],
      }),
    ).toEqual([file('files/abc123'), file('files/def')]);
  });
});

describe('Responses', () => {
  it('reads input_file and input_image parts of messages, tool outputs and prompt variables', () => {
    expect(
      responsesReferences({
        input: [
          { role: 'user', content: [{ type: 'input_file', file_id: 'file-a' }] },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'file-x' },
              { type: 'input_image', file_id: 'file-b' },
              { type: 'input_image', image_url: 'https://example.com/i.png' },
            ],
          },
          { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'file-c' }] },
          { type: 'function_call_output', call_id: 'd', output: 'file-d' },
          { type: 'code_interpreter_call', container_id: 'cntr_echoed' },
        ],
        prompt: { id: 'pmpt_1', variables: { doc: { type: 'input_file', file_id: 'file-e' }, name: 'plain' } },
      }),
    ).toEqual([file('file-a'), file('file-b'), file('file-c'), file('file-e')]);
  });

  it("reads the code interpreter's container (an id, or auto with file ids) and image generation's mask", () => {
    expect(
      responsesReferences({
        input: 'hi',
        tools: [
          { type: 'code_interpreter', container: 'cntr_1' },
          { type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-a', 'file-b'] } },
          { type: 'image_generation', input_image_mask: { file_id: 'file-m' } },
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          { type: 'function', name: 'f', parameters: {} },
        ],
      }),
    ).toEqual([container('cntr_1'), file('file-a'), file('file-b'), file('file-m')]);
  });

  it('reads the stored response previous_response_id continues, first, beside the files', () => {
    expect(responsesReferences({ input: 'and then?', previous_response_id: 'resp_1' })).toEqual([response('resp_1')]);
    expect(
      responsesReferences({
        input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-a' }] }],
        previous_response_id: 'resp_2',
      }),
    ).toEqual([response('resp_2'), file('file-a')]);
    // Absent, null (the SDK's "none") or empty names nothing.
    for (const previous of [undefined, null, '']) {
      expect(responsesReferences({ input: 'hi', previous_response_id: previous })).toBeUndefined();
    }
  });

  it('reads the stored conversation a request joins (an id or {id}); a conversation is not a response', () => {
    const conversation = (id: string) => ({ kind: 'conversation', id });
    expect(responsesReferences({ input: 'hi', conversation: 'conv_1' })).toEqual([conversation('conv_1')]);
    expect(responsesReferences({ input: 'hi', conversation: { id: 'conv_2' } })).toEqual([conversation('conv_2')]);
    for (const none of [undefined, null, '', {}, { id: '' }]) {
      expect(responsesReferences({ input: 'hi', conversation: none })).toBeUndefined();
    }
  });

  it('reads the stored items the provider resolves by id: references, id-only reasoning, hosted tool calls', () => {
    const item = (id: string) => ({ kind: 'response_item', id });
    expect(
      responsesReferences({
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: 'msg_1' },
          // The SDK's ItemReference may leave its type out (or null); a role makes an item a message instead.
          { id: 'msg_2' },
          { type: null, id: 'msg_3' },
          { role: 'assistant', content: 'hello', id: 'msg_not_a_reference' },
          // Reasoning without its encrypted content is filled in from the store; with it, nothing is read.
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: null },
          { type: 'reasoning', id: 'rs_inline', summary: [], encrypted_content: 'gAAAA' },
          { type: 'compaction', id: 'cmp_inline', encrypted_content: 'gAAAA' },
          // Hosted tools' calls are OpenAI's own items (their stored results are more than an answer shows).
          { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search' } },
          { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: null },
          // An approval answers an approval request, a stored item, by id.
          { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true },
          // Items the caller sends whole name nothing, id or not.
          { type: 'message', role: 'assistant', id: 'msg_whole', content: [{ type: 'output_text', text: 'x' }] },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
          { type: 'item_reference', id: '' },
        ],
      }),
    ).toEqual([
      item('msg_1'),
      item('msg_2'),
      item('msg_3'),
      item('rs_1'),
      item('rs_2'),
      item('ws_1'),
      item('ig_1'),
      item('mcpr_1'),
    ]);
  });

  it('names nothing for a string input or text-only items', () => {
    expect(responsesReferences({ input: 'hello' })).toBeUndefined();
    expect(
      responsesReferences({ input: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search' }] }),
    ).toBeUndefined();
  });
});

describe('videos and OCR', () => {
  it("read a create's reference by file id, a remix's passed-on input_reference, an OCR document by id", () => {
    expect(videoCreateReferences({ reference: { kind: 'file_id', fileId: 'file-v' } })).toEqual([file('file-v')]);
    expect(videoCreateReferences({ reference: { kind: 'url' } })).toBeUndefined();
    expect(videoCreateReferences({})).toBeUndefined();
    expect(videoRemixReferences({ extra: { input_reference: { file_id: 'file-r' } } })).toEqual([file('file-r')]);
    expect(videoRemixReferences({ extra: {} })).toBeUndefined();
    expect(ocrReferences({ document: { type: 'file', file_id: 'f-1' } })).toEqual([file('f-1')]);
    expect(ocrReferences({ document: { type: 'document_url', document_url: 'https://x/y.pdf' } })).toBeUndefined();
  });
});

describe('Anthropic Messages', () => {
  it('reads file sources of documents and images, container uploads, those in tool results, and the container', () => {
    expect(
      messagesReferences({
        messages: [
          {
            content: [
              { type: 'document', source: { type: 'file', file_id: 'file_a' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
              { type: 'image', source: { type: 'file', file_id: 'file_b' } },
              { type: 'container_upload', file_id: 'file_c' },
            ],
          },
          {
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'image', source: { type: 'file', file_id: 'file_d' } }],
              },
            ],
          },
        ],
        container: 'container_1',
      }),
    ).toEqual([file('file_a'), file('file_b'), file('file_c'), file('file_d'), container('container_1')]);
    expect(messagesReferences({ messages: [{ content: 'hi' }], container: { id: 'c2', skills: [] } })).toEqual([
      container('c2'),
    ]);
    expect(messagesReferences({ messages: [{ content: [{ type: 'text', text: 'file_x' }] }] })).toBeUndefined();
  });
});

describe('Gemini', () => {
  const part = (fileUri: string) => ({ fileData: { mimeType: 'application/pdf', fileUri } });

  it('reads Files API parts of contents and the system instruction, for every method', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'x' }, part('https://generativelanguage.googleapis.com/v1beta/files/a1')] },
      ],
      systemInstruction: { parts: [part('files/b2')] },
    };
    expect(genaiReferences({ action: 'generateContent', body })).toEqual([file('files/a1'), file('files/b2')]);
    expect(genaiReferences({ action: 'embedContent', body: { content: { parts: [part('files/c3')] } } })).toEqual([
      file('files/c3'),
    ]);
    expect(
      genaiReferences({
        action: 'batchEmbedContents',
        body: { requests: [{ content: { parts: [part('files/d4')] } }, { content: { parts: [{ text: 'y' }] } }] },
      }),
    ).toEqual([file('files/d4')]);
    expect(
      genaiReferences({
        action: 'countTokens',
        body: { generateContentRequest: { contents: [{ parts: [part('files/e5')] }] } },
      }),
    ).toEqual([file('files/e5')]);
  });

  it('leaves URLs that are not the Files API (Cloud Storage, YouTube, web pages)', () => {
    const body = {
      contents: [
        {
          parts: [
            part('gs://bucket/a.pdf'),
            part('https://www.youtube.com/watch?v=x'),
            part('https://example.com/files/report.pdf'),
          ],
        },
      ],
    };
    expect(genaiReferences({ action: 'generateContent', body })).toBeUndefined();
  });
});

describe('operations', () => {
  it('each operation that can name a resource reads it; the others name none', () => {
    expect(chatOp.references).toBe(chatReferences);
    expect(countTokensOp.references).toBe(chatReferences);
    expect(responsesOp.references).toBe(responsesReferences);
    expect(videoCreateOp.references).toBe(videoCreateReferences);
    expect(videoRemixOp.references).toBe(videoRemixReferences);
    expect(ocrOp.references).toBe(ocrReferences);
    expect(messagesSpec.references).toBe(messagesReferences);
    expect(modelsCallSpec.references).toBe(genaiReferences);
  });
});
