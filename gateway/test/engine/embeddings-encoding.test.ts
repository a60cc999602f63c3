import { describe, expect, it } from 'vitest';
import { type EmbeddingResponse, encodeAsRequested } from '../../src/schemas/embeddings.ts';

const res = (): EmbeddingResponse => ({
  object: 'list',
  model: 'm',
  data: [{ object: 'embedding', index: 0, embedding: [0.5, -1.25, 3] }],
  usage: { prompt_tokens: 1, total_tokens: 1 },
});

describe('embedding encoding', () => {
  it('turns float arrays into little-endian float32 base64 when asked', () => {
    const out = encodeAsRequested({ model: 'm', input: 'x', encoding_format: 'base64' }, res());
    const b64 = out.data[0]!.embedding as string;
    const buf = Buffer.from(b64, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4))).toEqual([0.5, -1.25, 3]);
  });

  it('leaves floats alone otherwise', () => {
    expect(encodeAsRequested({ model: 'm', input: 'x' }, res()).data[0]!.embedding).toEqual([0.5, -1.25, 3]);
  });
});
