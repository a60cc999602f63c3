import { describe, expect, it } from 'vitest';
import { BatchInputLines, batchInputRef, scansAsBatchInput } from '../../src/engine/batch-input-scan.ts';
import { geminiRequestReferences, lineReferences } from '../../src/engine/batch-references.ts';
import { GatewayError } from '../../src/http/errors.ts';

const part = (uri: string) => ({ fileData: { fileUri: uri, mimeType: 'image/png' } });
const request = (...uris: string[]) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }, ...uris.map(part)] }] });
const line = (key: string, ...uris: string[]) => JSON.stringify({ key, request: request(...uris) });

/** The files named, as `where: id`, after feeding `text` in chunks of `size` bytes. */
function scan(text: string, size = 7, max = 1024): string[] | undefined {
  const lines = new BatchInputLines(max);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) lines.push(bytes.subarray(i, i + size));
  return lines
    .end()
    ?.entries()
    .map((e) => `${e.where}: ${e.ref.id}`);
}

describe('which uploads are read as a batch input', () => {
  it('takes JSON Lines media types and .jsonl names', () => {
    expect(scansAsBatchInput('x.bin', 'jsonl')).toBe(true);
    expect(scansAsBatchInput('x', 'application/jsonl; charset=utf-8')).toBe(true);
    expect(scansAsBatchInput('x', 'application/x-ndjson')).toBe(true);
    expect(scansAsBatchInput('Batch.JSONL', 'application/octet-stream')).toBe(true);
    expect(scansAsBatchInput('photo.png', 'image/png')).toBe(false);
    expect(scansAsBatchInput('notes.txt', 'text/plain')).toBe(false);
    expect(scansAsBatchInput('data.json', 'application/json')).toBe(false);
  });

  it('records the batch input under the file id as recorded', () => {
    expect(batchInputRef('files/abc')).toEqual({ kind: 'batch_input', id: 'abc' });
    expect(batchInputRef('abc')).toEqual({ kind: 'batch_input', id: 'abc' });
  });
});

describe('the lines of a batch input as they stream', () => {
  it('collects the files each line names, whatever the chunking, labelled by line and key', () => {
    const text = `${line('a', 'files/one')}\r\n\n${line('b', 'http://h/v1beta/files/two', 'files/one')}`;
    for (const size of [1, 5, 64, 10_000]) {
      expect(scan(text, size)).toEqual(['line 1 (key "a"): files/one', 'line 3 (key "b"): files/two']);
    }
  });

  it('reads proto names (file_data.file_uri, system_instruction) and bare requests', () => {
    const snake = { key: 's', request: { system_instruction: { parts: [{ file_data: { file_uri: 'files/sys' } }] } } };
    const bare = { contents: [{ parts: [part('files/bare')] }] };
    expect(scan(`${JSON.stringify(snake)}\n${JSON.stringify(bare)}\n`)).toEqual([
      'line 1 (key "s"): files/sys',
      'line 2: files/bare',
    ]);
  });

  it('is a batch input of no files when its requests name none; not one when empty', () => {
    expect(scan(`${line('a')}\n`)).toEqual([]);
    expect(scan('')).toBeUndefined();
    expect(scan('\n \n')).toBeUndefined();
  });

  it('is no batch input once a line is not JSON or not a request, and reads no further', () => {
    expect(scan(`${line('a', 'files/one')}\nnot json\n${'x'.repeat(5000)}\n`)).toBeUndefined();
    expect(scan(`{"key":"a","prompt":"hi"}\n${line('b', 'files/x')}\n`)).toBeUndefined();
    expect(scan('[1,2]\n')).toBeUndefined();
  });

  it('refuses a line longer than the bound with 400 naming it, before the line ends', () => {
    const lines = new BatchInputLines(100);
    lines.push(Buffer.from(`${line('a')}\n`));
    let err: unknown;
    try {
      lines.push(Buffer.from(`{"key":"b","request":{"contents":[{"parts":[{"text":"${'y'.repeat(200)}`));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('invalid_request');
    expect((err as GatewayError).message).toContain('line 2 of this JSONL file is longer than 100 bytes');
  });

  it('refuses past MAX_BATCH_REFS distinct files with 400 naming the line', () => {
    const ids = Array.from({ length: 10_001 }, (_, i) => `files/f${i}`);
    const text = `${line('a', ...ids.slice(0, 6000))}\n${line('b', ...ids.slice(6000))}\n`;
    expect(() => scan(text, 65_536, 10_000_000)).toThrow(/line 2 \(key "b"\): the batch names more than 10000/);
  });
});

describe('the Gemini requests of a batch', () => {
  it('reads both spellings of a field given twice', () => {
    const both = { contents: [{ parts: [{ fileData: { fileUri: 'files/a' }, file_data: { file_uri: 'files/b' } }] }] };
    expect(geminiRequestReferences(both)?.map((r) => r.id)).toEqual(['files/a', 'files/b']);
  });

  it('reads inline params in proto names', () => {
    const params = { contents: [{ parts: [{ file_data: { file_uri: 'files/p' } }] }] };
    expect(lineReferences({ custom_id: 'x', params }, '/v1/chat/completions', 'genai')).toEqual([
      { kind: 'file', id: 'files/p' },
    ]);
  });
});
