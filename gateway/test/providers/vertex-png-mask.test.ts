// OpenAI's edit mask (fully transparent = edit) read as Imagen's (white = edit): every PNG colour type that can carry
// transparency, every row filter, packed and 16-bit samples; masks without transparency left alone; bad or
// oversized PNGs refused with a reason instead of being sent. The PNGs come from test/fakes/png.ts, written without
// pngjs, so the library the gateway uses is checked against an independent encoder.
import { describe, expect, it } from 'vitest';
import { encodePng, readGray8, rgbaMask } from '../../../test/fakes/png.ts';
import { MASK_LIMITS, openAiMaskToImagen } from '../../src/providers/vertex/png-mask.ts';

const W = 7;
const H = 5;
/** The area to edit in every fixture: a diagonal band. */
const hole = (x: number, y: number) => Math.abs(x - y) <= 1;

async function converted(png: Buffer) {
  const r = await openAiMaskToImagen(png);
  if (!r.ok) throw new Error(r.error);
  expect(r.mask).toBeDefined();
  return readGray8(Buffer.from(r.mask!));
}

function expectHole(gray: { width: number; height: number; pixels: Uint8Array }) {
  expect([gray.width, gray.height]).toEqual([W, H]);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) expect(gray.pixels[y * W + x], `pixel ${x},${y}`).toBe(hole(x, y) ? 255 : 0);
  }
}

describe('openAiMaskToImagen', () => {
  it('reads RGBA at 8 and 16 bits through every row filter', async () => {
    for (const bitDepth of [8, 16] as const) {
      const max = bitDepth === 8 ? 255 : 65535;
      const png = encodePng({
        width: W,
        height: H,
        colorType: 6,
        bitDepth,
        // Varied colours so the filters have something to predict; alpha 0 only in the hole.
        samples: (x, y) => [(x * 37) % max, (y * 91) % max, (x * y * 13) % max, hole(x, y) ? 0 : max - x],
        filter: (y) => y % 5,
      });
      expectHole(await converted(png));
    }
  });

  it('undoes each filter exactly on noisy pixels (predictor ties included)', async () => {
    const size = 48;
    // A deterministic hash: colour noise for the predictors, and a scattered set of transparent pixels.
    const noise = (x: number, y: number, c: number) => ((x * 7919 + y * 104729 + c * 1299709) ^ (x * y * 31)) % 251;
    const transparent = (x: number, y: number) => noise(x, y, 9) % 3 === 0;
    for (let f = 0; f < 5; f++) {
      const png = encodePng({
        width: size,
        height: size,
        colorType: 6,
        bitDepth: 8,
        samples: (x, y) => [
          noise(x, y, 0),
          noise(x, y, 1) % 4,
          noise(x, y, 2),
          transparent(x, y) ? 0 : 1 + (noise(x, y, 3) % 3),
        ],
        filter: () => f,
      });
      const r = await openAiMaskToImagen(png);
      if (!r.ok || !r.mask) throw new Error('no mask');
      const gray = readGray8(Buffer.from(r.mask));
      const expected = Array.from({ length: size * size }, (_, i) =>
        transparent(i % size, Math.floor(i / size)) ? 255 : 0,
      );
      expect([...gray.pixels], `filter ${f}`).toEqual(expected);
    }
  });

  it('reads gray + alpha', async () => {
    const png = encodePng({
      width: W,
      height: H,
      colorType: 4,
      bitDepth: 8,
      samples: (x, y) => [x * 30, hole(x, y) ? 0 : 200],
      filter: (y) => (y + 2) % 5,
    });
    expectHole(await converted(png));
  });

  it('reads a packed palette with tRNS (as optimisers write masks)', async () => {
    for (const bitDepth of [1, 2, 4, 8] as const) {
      const png = encodePng({
        width: W,
        height: H,
        colorType: 3,
        bitDepth,
        palette: [
          [255, 255, 255],
          [0, 0, 0],
        ],
        trns: Buffer.from([255, 0]),
        samples: (x, y) => [hole(x, y) ? 1 : 0],
        filter: (y) => y % 5,
      });
      expectHole(await converted(png));
    }
  });

  it('reads a colour key (tRNS on gray and RGB)', async () => {
    const gray = encodePng({
      width: W,
      height: H,
      colorType: 0,
      bitDepth: 4,
      trns: Buffer.from([0, 3]),
      samples: (x, y) => [hole(x, y) ? 3 : 9],
    });
    expectHole(await converted(gray));
    const rgb = encodePng({
      width: W,
      height: H,
      colorType: 2,
      bitDepth: 16,
      trns: Buffer.from([0, 1, 0, 2, 0, 3]),
      samples: (x, y) => (hole(x, y) ? [1, 2, 3] : [1, 2, 4]),
      filter: (y) => 4 - (y % 5),
    });
    expectHole(await converted(rgb));
  });

  it('edits only fully transparent pixels: 16-bit alpha 1 of 65535 is partly transparent, not a hole', async () => {
    const png = encodePng({
      width: W,
      height: H,
      colorType: 6,
      bitDepth: 16,
      samples: (x, y) => [0, 0, 0, hole(x, y) ? 0 : 1 + ((x * 60) % 128)],
    });
    expectHole(await converted(png));
  });

  it('leaves alone a mask without transparency, or with no fully transparent pixel (Imagen’s own convention)', async () => {
    const bw = encodePng({ width: W, height: H, colorType: 0, bitDepth: 8, samples: (x, y) => [hole(x, y) ? 255 : 0] });
    expect(await openAiMaskToImagen(bw)).toEqual({ ok: true, mask: undefined, width: W, height: H });
    const opaque = rgbaMask(W, H, () => false);
    expect(await openAiMaskToImagen(opaque)).toEqual({ ok: true, mask: undefined, width: W, height: H });
  });

  it('makes a fully transparent mask all white (edit everything)', async () => {
    const gray = await converted(rgbaMask(3, 2, () => true));
    expect([...gray.pixels]).toEqual([255, 255, 255, 255, 255, 255]);
  });

  it('refuses what it cannot read safely, naming why', async () => {
    const cases: [Buffer, string][] = [
      [Buffer.from('GIF89a not a png'), 'not a PNG'],
      [rgbaMask(W, H, hole).subarray(0, 40), 'truncated'],
      [
        encodePng({ width: W, height: H, colorType: 6, bitDepth: 8, samples: () => [0, 0, 0, 0], interlace: true }),
        'interlaced',
      ],
    ];
    for (const [png, reason] of cases) {
      const r = await openAiMaskToImagen(png);
      expect(r.ok, reason).toBe(false);
      if (!r.ok) expect(r.error).toContain(reason);
    }
  });

  it('bounds the pixels and the inflated bytes before inflating', async () => {
    const png = rgbaMask(64, 64, hole);
    const pixels = await openAiMaskToImagen(png, { maxPixels: 64 * 63, maxRawBytes: 1 << 20 });
    expect(pixels).toEqual({ ok: false, error: expect.stringContaining('at most 4032 pixels') });
    const raw = await openAiMaskToImagen(png, { maxPixels: 1 << 20, maxRawBytes: 64 * (64 * 4 + 1) - 1 });
    expect(raw).toEqual({ ok: false, error: expect.stringContaining('image data is larger') });
  });

  it('admits 8-bit RGBA at 4096x4096 by default, not 16-bit RGBA, nor one pixel more', async () => {
    // Only the header is real: what is refused from the header never reaches the image data.
    const header = (width: number, height: number, bitDepth: number) => {
      const png = rgbaMask(1, 1, () => true);
      png.writeUInt32BE(width, 16);
      png.writeUInt32BE(height, 20);
      png[24] = bitDepth;
      return png;
    };
    const eight = await openAiMaskToImagen(header(4096, 4096, 8));
    expect(eight).toEqual({ ok: false, error: 'the PNG image data is truncated' });
    const sixteen = await openAiMaskToImagen(header(4096, 4096, 16));
    expect(sixteen).toEqual({ ok: false, error: expect.stringContaining(`larger than ${MASK_LIMITS.maxRawBytes}`) });
    const wider = await openAiMaskToImagen(header(4097, 4096, 8));
    expect(wider).toEqual({ ok: false, error: expect.stringContaining('at most 16777216 pixels') });
  });

  it('refuses image data shorter than its header says (pngjs alone would read the missing rows as holes)', async () => {
    const small = rgbaMask(2, 2, () => false);
    const oneRow = rgbaMask(2, 1, () => false);
    const at = (png: Buffer) => png.indexOf('IDAT') - 4;
    const idat = oneRow.subarray(at(oneRow), at(oneRow) + 12 + oneRow.readUInt32BE(at(oneRow)));
    const short = Buffer.concat([small.subarray(0, at(small)), idat, small.subarray(-12)]);
    expect(await openAiMaskToImagen(short)).toEqual({ ok: false, error: 'the PNG image data is truncated' });
  });

  it('refuses a PNG whose checksums do not match', async () => {
    const png = rgbaMask(W, H, hole);
    png[29] = png[29]! ^ 0xff; // the IHDR chunk's CRC
    const r = await openAiMaskToImagen(png);
    expect(r).toEqual({ ok: false, error: expect.stringContaining('the PNG is corrupt') });
  });

  it('ignores bytes after the end of the PNG, as viewers do', async () => {
    expectHole(await converted(Buffer.concat([rgbaMask(W, H, hole), Buffer.from('trailer')])));
  });

  it('converts several masks at once (more than run together) and gives up on one that takes too long', async () => {
    const masks = Array.from({ length: 5 }, (_, i) => rgbaMask(W + i, H, hole));
    const results = await Promise.all(masks.map((m) => openAiMaskToImagen(m)));
    expect(results.map((r) => r.ok && r.mask !== undefined && readGray8(Buffer.from(r.mask)).width)).toEqual([
      7, 8, 9, 10, 11,
    ]);
    // A worker thread takes tens of milliseconds to start: 1 ms is always too short.
    const late = await openAiMaskToImagen(rgbaMask(W, H, hole), MASK_LIMITS, 1);
    expect(late).toEqual({ ok: false, error: 'the mask was not converted within 1 ms' });
    expect((await openAiMaskToImagen(rgbaMask(W, H, hole))).ok).toBe(true);
  });

  it('refuses image data that inflates past what its header says (a decompression bomb)', async () => {
    // The header says 2x2, the data is a 512x512 image's.
    const big = rgbaMask(512, 512, () => true);
    const small = rgbaMask(2, 2, () => true);
    const idat = (png: Buffer) => {
      const at = png.indexOf('IDAT') - 4;
      return png.subarray(at, at + 12 + png.readUInt32BE(at));
    };
    const bomb = Buffer.concat([small.subarray(0, small.indexOf('IDAT') - 4), idat(big), small.subarray(-12)]);
    const r = await openAiMaskToImagen(bomb);
    expect(r).toEqual({ ok: false, error: expect.stringContaining('corrupt or larger') });
  });
});
