// The multipart/form-data body sent upstream reads back as the same fields and file (a WHATWG parser reads it).
import { describe, expect, it } from 'vitest';
import { encodeForm } from '../../src/providers/shared/form-body.ts';

describe('encodeForm', () => {
  it('writes fields, repeated fields and a file that a multipart parser reads back', async () => {
    const data = Buffer.from([0, 1, 2, 255, 13, 10, 45, 45]);
    const { contentType, body } = encodeForm([
      { name: 'model', value: 'whisper-1' },
      { name: 'timestamp_granularities[]', value: 'word' },
      { name: 'timestamp_granularities[]', value: 'segment' },
      { name: 'file', file: { filename: 'a "b".wav', mimetype: 'audio/wav', data } },
    ]);
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
    expect(form.get('model')).toBe('whisper-1');
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);
    const file = form.get('file') as File;
    expect(file.type).toBe('audio/wav');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(data);
  });
});
