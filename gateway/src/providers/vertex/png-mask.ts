// OpenAI's edit mask (a PNG whose fully transparent pixels mark the area to edit) rewritten as Imagen's (a
// grayscale image whose non-zero pixels mark it). This file bounds what a conversion is given (from the chunk
// headers, before anything is inflated) and runs it; pngjs decodes and encodes (png-mask-convert.ts). pngjs is
// synchronous and takes 0.3–1 s on a 4096×4096 mask, so the conversion runs in a worker thread
// (png-mask-worker.ts), never on the loop, and only the worker loads pngjs.
import { Worker } from 'node:worker_threads';

export interface MaskLimits {
  /** Width × height; 4096 × 4096 covers Imagen's inputs (10 MB files) with room to spare. */
  maxPixels: number;
  /** The inflated image data, filter bytes included: 8-bit RGBA at the pixel bound fits, 16-bit RGBA does not. */
  maxRawBytes: number;
}

export const MASK_LIMITS: MaskLimits = { maxPixels: 4096 * 4096, maxRawBytes: 4096 * (4096 * 4 + 1) };

/** A conversion (waiting for a worker included) that takes longer is given up and its worker stopped. */
export const MASK_TIMEOUT_MS = 20_000;
/** Conversions running at once: one at the pixel bound peaks at ~280 MB (measured), freed when its worker exits. */
const MAX_WORKERS = 2;

/** `mask` undefined: the PNG carries no fully transparent pixel, so it is not in OpenAI's convention. */
export type MaskResult =
  | { ok: true; mask: Uint8Array | undefined; width: number; height: number }
  | { ok: false; error: string };

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(data: Uint8Array): boolean {
  return data.length >= 8 && Buffer.from(data.buffer, data.byteOffset, 8).equals(SIGNATURE);
}

export interface Head {
  width: number;
  height: number;
  colorType: number;
  bitDepth: number;
  interlace: number;
  /** An alpha channel (types 4, 6) or a tRNS chunk: the only ways a PNG carries transparency. */
  transparency: boolean;
  idat: Buffer[];
  /** The file up to IEND's end: pngjs refuses bytes after it, which viewers (and the code before pngjs) ignore. */
  file: Buffer;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };
export const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Readonly<Record<number, readonly number[]>> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

/** The chunk layout only (lengths, IHDR, tRNS, where the IDATs are): nothing is inflated or copied here. */
export function readHead(png: Uint8Array): Parsed<Head> {
  if (!isPng(png)) return fail('not a PNG file (OpenAI masks are PNGs with transparency)');
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  let ihdr: Buffer | undefined;
  let trns = false;
  const idat: Buffer[] = [];
  let at = 8;
  for (;;) {
    if (at + 12 > buf.length) return fail('the PNG is truncated');
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const end = at + 8 + length;
    if (end + 4 > buf.length) return fail('the PNG is truncated');
    if (type === 'IHDR') ihdr = buf.subarray(at + 8, end);
    else if (type === 'tRNS') trns = true;
    else if (type === 'IDAT') idat.push(buf.subarray(at + 8, end));
    at = end + 4;
    if (type === 'IEND') break;
  }
  if (ihdr?.length !== 13) return fail('the PNG header is missing or malformed');
  if (idat.length === 0) return fail('the PNG has no image data');
  const colorType = ihdr[9]!;
  const head = { width: ihdr.readUInt32BE(0), height: ihdr.readUInt32BE(4), bitDepth: ihdr[8]!, colorType };
  return {
    ok: true,
    value: {
      ...head,
      interlace: ihdr[12]!,
      transparency: trns || colorType === 4 || colorType === 6,
      idat,
      file: buf.subarray(0, at),
    },
  };
}

/** The inflated size the header implies (one filter byte per row), or an error when the PNG is out of bounds. */
export function bounded(h: Head, limits: MaskLimits): Parsed<number> {
  const channels = CHANNELS[h.colorType];
  if (channels === undefined || !DEPTHS[h.colorType]?.includes(h.bitDepth)) {
    return fail(`the PNG has an invalid colour type ${h.colorType} / bit depth ${h.bitDepth}`);
  }
  if (h.width === 0 || h.height === 0) return fail('the PNG is empty (0 pixels)');
  if (h.width * h.height > limits.maxPixels) {
    return fail(`the mask is ${h.width}x${h.height}; at most ${limits.maxPixels} pixels are read`);
  }
  // pngjs inflates interlaced data without an output bound, so an interlaced bomb would not be stopped.
  if (h.interlace !== 0) return fail('interlaced PNG masks are not read; save the mask without interlacing');
  const rawBytes = h.height * (Math.ceil((h.width * channels * h.bitDepth) / 8) + 1);
  if (rawBytes > limits.maxRawBytes) return fail(`the mask's image data is larger than ${limits.maxRawBytes} bytes`);
  return { ok: true, value: rawBytes };
}

let running = 0;
const waiting: (() => void)[] = [];

function release(): void {
  running--;
  waiting.shift()?.();
}

/** Runs convertMask in a fresh worker thread (~80 ms to start, nothing kept between masks), MAX_WORKERS at once. */
function inWorker(png: Uint8Array, limits: MaskLimits, timeoutMs: number): Promise<MaskResult> {
  return new Promise((resolve) => {
    let worker: Worker | undefined;
    let settled = false;
    const settle = (r: MaskResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const queued = waiting.indexOf(start);
      if (queued >= 0) waiting.splice(queued, 1);
      if (worker) {
        void worker.terminate();
        release();
      }
      resolve(r);
    };
    const timer = setTimeout(() => settle(fail(`the mask was not converted within ${timeoutMs} ms`)), timeoutMs);
    function start() {
      running++;
      worker = new Worker(new URL('./png-mask-worker.ts', import.meta.url), {
        // A copy of exactly the mask: cloning a view would clone the whole buffer it is cut from.
        workerData: { png: new Uint8Array(png), limits },
      });
      worker.once('message', (r: MaskResult) => settle(r));
      worker.once('error', (e) => settle(fail(`the mask could not be converted (${e.message})`)));
      worker.once('exit', (code) => settle(fail(`the mask could not be converted (worker exit ${code})`)));
    }
    if (running < MAX_WORKERS) start();
    else waiting.push(start);
  });
}

/**
 * OpenAI's mask as Imagen's: white where the PNG is fully transparent, black elsewhere. A PNG without any fully
 * transparent pixel (or without transparency at all) answers `mask: undefined`: it is not in OpenAI's convention
 * (it would edit nothing), so the caller passes it on as Imagen's own black-and-white mask. The headers are checked
 * here, so only masks within bounds that can carry transparency reach a worker.
 */
export async function openAiMaskToImagen(
  png: Uint8Array,
  limits: MaskLimits = MASK_LIMITS,
  timeoutMs: number = MASK_TIMEOUT_MS,
): Promise<MaskResult> {
  const head = readHead(png);
  if (!head.ok) return head;
  const { width, height } = head.value;
  if (!head.value.transparency) return { ok: true, mask: undefined, width, height };
  const rawBytes = bounded(head.value, limits);
  if (!rawBytes.ok) return rawBytes;
  return inWorker(png, limits, timeoutMs);
}
