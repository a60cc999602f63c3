// Starts the pod's async worker (boot.ts) on the runtime's coordinator: Redis with several pods, the in-process
// coordinator in the embedded default, the same code on both.
import { DEFAULT_ASYNC_SETTINGS } from '../config/async-settings.ts';
import { unifiedFormat } from '../formats/openai/format.ts';
import type { Runtime } from '../runtime.ts';
import { JobStore } from '../state/services/jobs/index.ts';
import { asyncOperations } from './operations.ts';
import { AsyncWorker } from './worker.ts';

export function startAsyncWorker(rt: Runtime): AsyncWorker {
  const worker = new AsyncWorker(
    rt,
    rt.env.async ?? DEFAULT_ASYNC_SETTINGS,
    new JobStore(rt.state.db),
    asyncOperations(unifiedFormat),
  );
  worker.start();
  return worker;
}
