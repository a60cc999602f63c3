// Real PNG files for image tests, written and read independently of the gateway's own PNG code: any colour type and
// bit depth, each row's filter chosen by the test (so decoders are checked against every filter), optional tRNS and
// interlace flag; and a reader for 8-bit grayscale PNGs (Imagen masks) and for any PNG's size.
import { crc32, deflateSync, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** One row filtered with PNG filter `type` (0 none, 1 sub, 2 up, 3 average, 4 paeth). */
function filterRow(row: Buffer, prev: Buffer | undefined, bpp: number, type: number): Buffer {
  const out = Buffer.alloc(row.length + 1);
  out[0] = type;
  for (let x = 0; x < row.length; x++) {
    const a = x >= bpp ? row[x - bpp]! : 0;
    const b = prev ? prev[x]! : 0;
    const c = prev && x >= bpp ? prev[x - bpp]! : 0;
    const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type]!;
    out[x + 1] = (row[x]! - pred) & 0xff;
  }
  return out;
}

export interface PngSpec {
  width: number;
  height: number;
  colorType: 0 | 2 | 3 | 4 | 6;
  bitDepth: 1 | 2 | 4 | 8 | 16;
  /** Samples per pixel in channel order (palette index for type 3), row-major. */
  samples: (x: number, y: number) => number[];
  /** The filter of row y (default: none). */
  filter?: (y: number) => number;
  palette?: [number, number, number][];
  trns?: Buffer;
  interlace?: boolean;
}

/** A PNG file written from samples; rows packed at the bit depth, filtered as asked. */
export function encodePng(s: PngSpec): Buffer {
  const channels = CHANNELS[s.colorType]!;
  const rowBytes = Math.ceil((s.width * channels * s.bitDepth) / 8);
  const bpp = Math.max(1, (channels * s.bitDepth) >> 3);
  const rows: Buffer[] = [];
  let prev: Buffer | undefined;
  for (let y = 0; y < s.height; y++) {
    const row = Buffer.alloc(rowBytes);
    let bit = 0;
    for (let x = 0; x < s.width; x++) {
      for (const v of s.samples(x, y)) {
        if (s.bitDepth === 16) row.writeUInt16BE(v, bit >> 3);
        else if (s.bitDepth === 8) row[bit >> 3] = v;
        else row[bit >> 3]! |= v << (8 - s.bitDepth - (bit & 7));
        bit += s.bitDepth;
      }
    }
    rows.push(filterRow(row, prev, bpp, s.filter?.(y) ?? 0));
    prev = row;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(s.width, 0);
  ihdr.writeUInt32BE(s.height, 4);
  ihdr[8] = s.bitDepth;
  ihdr[9] = s.colorType;
  ihdr[12] = s.interlace ? 1 : 0;
  const parts = [SIGNATURE, chunk('IHDR', ihdr)];
  if (s.palette) parts.push(chunk('PLTE', Buffer.from(s.palette.flat())));
  if (s.trns) parts.push(chunk('tRNS', s.trns));
  parts.push(chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** An 8-bit RGBA PNG: `transparent(x, y)` pixels get alpha 0 (OpenAI's "edit here"), the rest are opaque white. */
export function rgbaMask(width: number, height: number, transparent: (x: number, y: number) => boolean): Buffer {
  return encodePng({
    width,
    height,
    colorType: 6,
    bitDepth: 8,
    samples: (x, y) => (transparent(x, y) ? [0, 0, 0, 0] : [255, 255, 255, 255]),
  });
}

/** An opaque 8-bit RGB PNG (a source image). */
export function rgbImage(width: number, height: number): Buffer {
  return encodePng({ width, height, colorType: 2, bitDepth: 8, samples: (x, y) => [x & 0xff, y & 0xff, 128] });
}

/** Width and height from the IHDR chunk, or undefined when `data` is not a PNG. */
export function pngSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length < 24 || !data.subarray(0, 8).equals(SIGNATURE)) return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** The pixels of an 8-bit grayscale, non-interlaced PNG whose rows are unfiltered (what the gateway writes). */
export function readGray8(data: Buffer): { width: number; height: number; pixels: Uint8Array } {
  const size = pngSize(data);
  if (!size) throw new Error('not a PNG');
  if (data[24] !== 8 || data[25] !== 0 || data[28] !== 0) throw new Error('not an 8-bit grayscale PNG');
  const idat: Buffer[] = [];
  for (let at = 8; at + 12 <= data.length; ) {
    const length = data.readUInt32BE(at);
    if (data.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(data.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const pixels = new Uint8Array(size.width * size.height);
  for (let y = 0; y < size.height; y++) {
    const at = y * (size.width + 1);
    if (raw[at] !== 0) throw new Error(`row ${y} is filtered`);
    pixels.set(raw.subarray(at + 1, at + 1 + size.width), y * size.width);
  }
  return { ...size, pixels };
}
