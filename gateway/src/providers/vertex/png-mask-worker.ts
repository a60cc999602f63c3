// The worker side of png-mask.ts: one conversion per worker, so pngjs's synchronous decode never blocks the loop
// and its buffers go away with the thread.
import { parentPort, workerData } from 'node:worker_threads';
import type { MaskLimits } from './png-mask.ts';
import { convertMask } from './png-mask-convert.ts';

// Safe: png-mask.ts's inWorker is the only code that starts this file, and it always passes these two fields.
const { png, limits } = workerData as { png: Uint8Array; limits: MaskLimits };
parentPort?.postMessage(convertMask(png, limits));
