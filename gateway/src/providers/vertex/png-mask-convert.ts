// The mask conversion itself, run in a worker thread (png-mask-worker.ts): pngjs decodes and encodes
// synchronously, and only the worker loads it. The bounds were checked by png-mask.ts before a worker started; they
// are checked again here against the bytes the worker got.
import { inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { bounded, fail, MASK_LIMITS, type MaskLimits, type MaskResult, readHead } from './png-mask.ts';

/**
 * The conversion itself, synchronous (run it in a worker): white where the PNG is fully transparent, black
 * elsewhere, as an 8-bit grayscale PNG. `mask: undefined` when no pixel is fully transparent.
 */
export function convertMask(png: Uint8Array, limits: MaskLimits = MASK_LIMITS): MaskResult {
  const head = readHead(png);
  if (!head.ok) return head;
  const { width, height } = head.value;
  if (!head.value.transparency) return { ok: true, mask: undefined, width, height };
  const rawBytes = bounded(head.value, limits);
  if (!rawBytes.ok) return rawBytes;
  // pngjs stops inflating at the header's size but then decodes missing rows as zeros (transparent: "edit here")
  // and trips an assertion on longer data; the exact size is checked first so both get a clear answer.
  let inflated: number;
  try {
    inflated = inflateSync(Buffer.concat(head.value.idat), { maxOutputLength: rawBytes.value }).length;
  } catch {
    return fail('the PNG image data is corrupt or larger than its header says');
  }
  if (inflated !== rawBytes.value) return fail('the PNG image data is truncated');
  let pixels: ArrayLike<number>;
  try {
    // skipRescale keeps 16-bit samples as they are: rescaled to 8 bits, alpha 1..128 of 65535 would read as 0.
    pixels = PNG.sync.read(head.value.file, { skipRescale: true }).data;
  } catch {
    // pngjs's messages name the symptom, not the cause (a bad CRC reads "unrecognised content at end of stream").
    return fail('the PNG is corrupt (a bad checksum, chunk or palette index)');
  }
  // pngjs gives RGBA for every colour type, palettes and tRNS colour keys applied (a keyed pixel has alpha 0).
  const gray = Buffer.alloc(width * height);
  let edited = 0;
  for (let i = 0; i < gray.length; i++) {
    if (pixels[i * 4 + 3] === 0) {
      gray[i] = 255;
      edited++;
    }
  }
  if (edited === 0) return { ok: true, mask: undefined, width, height };
  const out = new PNG();
  out.width = width;
  out.height = height;
  out.data = gray;
  // Unfiltered rows and zlib's default deflate: the same bytes the gateway wrote before pngjs (the RLE default of
  // pngjs is 15× larger on patterned masks); adaptive filtering triples the time and is not smaller on every mask.
  const mask = PNG.sync.write(out, {
    colorType: 0,
    inputColorType: 0,
    bitDepth: 8,
    filterType: 0,
    deflateLevel: 6,
    deflateStrategy: 0,
  });
  return { ok: true, mask, width, height };
}
