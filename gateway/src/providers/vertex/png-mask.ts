// OpenAI's edit mask (a PNG whose fully transparent pixels mark the area to edit) rewritten as Imagen's (a
// grayscale image whose non-zero pixels mark it). Only the alpha of each pixel is read, so the decoder is small:
// every PNG colour type and bit depth, non-interlaced; no image library is needed (node:zlib inflates and deflates,
// off the event loop). Bounded: pixels, inflated bytes and the answer's size are all capped before work is done.
import { promisify } from 'node:util';
import { crc32, deflate, inflate } from 'node:zlib';

const inflateAsync = promisify(inflate);
const deflateAsync = promisify(deflate);

export interface MaskLimits {
  /** Width × height; 4096 × 4096 covers Imagen's inputs (10 MB files) with room to spare. */
  maxPixels: number;
  /** The inflated image data (filter bytes included): 16-bit RGBA at the pixel bound needs more, and is refused. */
  maxRawBytes: number;
}

export const MASK_LIMITS: MaskLimits = { maxPixels: 4096 * 4096, maxRawBytes: 64 * 1024 * 1024 };

/** `mask` undefined: the PNG carries no fully transparent pixel, so it is not in OpenAI's convention. */
export type MaskResult =
  | { ok: true; mask: Uint8Array | undefined; width: number; height: number }
  | { ok: false; error: string };

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(data: Uint8Array): boolean {
  return data.length >= 8 && Buffer.from(data.buffer, data.byteOffset, 8).equals(SIGNATURE);
}

interface Header {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace: number;
}

interface Chunks {
  header: Header;
  /** tRNS: alpha per palette index (type 3), or the transparent sample values (types 0 and 2). */
  trns: Uint8Array | undefined;
  idat: Buffer[];
}

const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Readonly<Record<number, readonly number[]>> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };
const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

function readChunks(png: Uint8Array): Parsed<Chunks> {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!isPng(png)) return fail('not a PNG file (OpenAI masks are PNGs with transparency)');
  let header: Header | undefined;
  let trns: Uint8Array | undefined;
  const idat: Buffer[] = [];
  let ended = false;
  let at = 8;
  while (!ended && at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const start = at + 8;
    const end = start + length;
    if (end + 4 > buf.length) return fail('the PNG is truncated');
    const data = buf.subarray(start, end);
    if (type === 'IHDR') {
      if (length !== 13) return fail('the PNG header is malformed');
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        bitDepth: data[8]!,
        colorType: data[9]!,
        interlace: data[12]!,
      };
    } else if (type === 'tRNS') {
      trns = data;
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      ended = true;
    }
    at = end + 4;
  }
  if (!ended) return fail('the PNG is truncated');
  if (!header) return fail('the PNG has no header');
  if (idat.length === 0) return fail('the PNG has no image data');
  return { ok: true, value: { header, trns, idat } };
}

/** Undoes PNG's per-row filters in place; `bpp` is the filter's byte distance (at least 1). */
function unfilter(raw: Buffer, height: number, rowBytes: number, bpp: number): Parsed<Buffer> {
  const out = Buffer.alloc(height * rowBytes);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (rowBytes + 1)]!;
    const src = y * (rowBytes + 1) + 1;
    const row = y * rowBytes;
    const prev = row - rowBytes;
    for (let x = 0; x < rowBytes; x++) {
      const a = x >= bpp ? out[row + x - bpp]! : 0;
      const b = y > 0 ? out[prev + x]! : 0;
      const c = x >= bpp && y > 0 ? out[prev + x - bpp]! : 0;
      let predictor: number;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) >> 1;
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          return fail(`the PNG uses an unknown row filter (${filter})`);
      }
      out[row + x] = (raw[src + x]! + predictor) & 0xff;
    }
  }
  return { ok: true, value: out };
}

/** The `index`-th sample of `bitDepth` bits in a row (depths below 8 are packed, most significant bits first). */
function sample(pixels: Buffer, row: number, index: number, bitDepth: number): number {
  if (bitDepth === 8) return pixels[row + index]!;
  if (bitDepth === 16) return pixels.readUInt16BE(row + index * 2);
  const bit = index * bitDepth;
  const byte = pixels[row + (bit >> 3)]!;
  return (byte >> (8 - bitDepth - (bit & 7))) & ((1 << bitDepth) - 1);
}

/** Per pixel: is it fully transparent? Undefined when the colour type carries no transparency at all. */
function transparency(
  h: Header,
  trns: Uint8Array | undefined,
): ((px: Buffer, row: number, x: number) => boolean) | undefined {
  const d = h.bitDepth;
  const key = (i: number) => (trns && trns.length >= i * 2 + 2 ? (trns[i * 2]! << 8) | trns[i * 2 + 1]! : -1);
  switch (h.colorType) {
    case 6:
      return (px, row, x) => sample(px, row, x * 4 + 3, d) === 0;
    case 4:
      return (px, row, x) => sample(px, row, x * 2 + 1, d) === 0;
    case 3:
      if (!trns) return undefined;
      return (px, row, x) => (trns[sample(px, row, x, d)] ?? 255) === 0;
    case 0: {
      const gray = key(0);
      if (gray < 0) return undefined;
      return (px, row, x) => sample(px, row, x, d) === gray;
    }
    case 2: {
      const [r, g, b] = [key(0), key(1), key(2)];
      if (r < 0 || g < 0 || b < 0) return undefined;
      return (px, row, x) =>
        sample(px, row, x * 3, d) === r && sample(px, row, x * 3 + 1, d) === g && sample(px, row, x * 3 + 2, d) === b;
    }
    default:
      return undefined;
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit grayscale PNG of `gray` (one byte per pixel). */
export async function encodeGrayPng(width: number, height: number, gray: Uint8Array): Promise<Uint8Array> {
  const raw = Buffer.alloc(height * (width + 1));
  for (let y = 0; y < height; y++) raw.set(gray.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grayscale
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', await deflateAsync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * OpenAI's mask as Imagen's: white where the PNG is fully transparent, black elsewhere. A PNG without any fully
 * transparent pixel (or without transparency at all) answers `mask: undefined`: it is not in OpenAI's convention
 * (it would edit nothing), so the caller passes it on as Imagen's own black-and-white mask.
 */
export async function openAiMaskToImagen(png: Uint8Array, limits: MaskLimits = MASK_LIMITS): Promise<MaskResult> {
  const parsed = readChunks(png);
  if (!parsed.ok) return parsed;
  const { header: h, trns, idat } = parsed.value;
  const channels = CHANNELS[h.colorType];
  if (channels === undefined || !DEPTHS[h.colorType]?.includes(h.bitDepth)) {
    return fail(`the PNG has an invalid colour type ${h.colorType} / bit depth ${h.bitDepth}`);
  }
  if (h.width === 0 || h.height === 0) return fail('the PNG is empty (0 pixels)');
  const isTransparent = transparency(h, trns);
  if (!isTransparent) return { ok: true, mask: undefined, width: h.width, height: h.height };
  if (h.width * h.height > limits.maxPixels) {
    return fail(`the mask is ${h.width}x${h.height}; at most ${limits.maxPixels} pixels are read`);
  }
  if (h.interlace !== 0) return fail('interlaced PNG masks are not read; save the mask without interlacing');
  const bitsPerPixel = channels * h.bitDepth;
  const rowBytes = Math.ceil((h.width * bitsPerPixel) / 8);
  const rawBytes = h.height * (rowBytes + 1);
  if (rawBytes > limits.maxRawBytes) return fail(`the mask's image data is larger than ${limits.maxRawBytes} bytes`);
  let raw: Buffer;
  try {
    raw = await inflateAsync(Buffer.concat(idat), { maxOutputLength: rawBytes });
  } catch {
    return fail('the PNG image data is corrupt or larger than its header says');
  }
  if (raw.length !== rawBytes) return fail('the PNG image data is truncated');
  const pixels = unfilter(raw, h.height, rowBytes, Math.max(1, bitsPerPixel >> 3));
  if (!pixels.ok) return pixels;
  const gray = new Uint8Array(h.width * h.height);
  let edited = 0;
  for (let y = 0; y < h.height; y++) {
    const row = y * rowBytes;
    for (let x = 0; x < h.width; x++) {
      if (isTransparent(pixels.value, row, x)) {
        gray[y * h.width + x] = 255;
        edited++;
      }
    }
  }
  if (edited === 0) return { ok: true, mask: undefined, width: h.width, height: h.height };
  return { ok: true, mask: await encodeGrayPng(h.width, h.height, gray), width: h.width, height: h.height };
}
