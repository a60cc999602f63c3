// Replicate predictions: create one on the models API (`/v1/models/{owner}/{name}/predictions`), the deployments
// API (`/v1/deployments/{owner}/{name}/predictions`, key `replicate_key_config.use_deployments_endpoint`) or, for
// `owner/name:version`, `/v1/predictions` with the version; `Prefer: wait` holds the answer up to 60 s, then
// `GET /v1/predictions/{id}` is polled until the prediction ends or the provider's timeout passes.
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { joinUrl, parseGenericError, sendJson } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext } from '../types.ts';

export const REPLICATE_BASE_URL = 'https://api.replicate.com';

/** What the gateway reads of a prediction; the rest is Replicate's. */
export interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  output?: unknown;
  error?: unknown;
  metrics?: { predict_time?: number; [k: string]: unknown };
}

/** Replicate holds a `Prefer: wait` request at most this long (its documented bound). */
const WAIT_SECONDS = 60;
const POLL_FIRST_MS = 500;
const POLL_MAX_MS = 5_000;
const CANCEL_TIMEOUT_MS = 5_000;
const ENDED = new Set(['succeeded', 'failed', 'canceled', 'aborted']);

function apiRoot(ctx: Pick<CallContext, 'network'>): string {
  let base = ctx.network.base_url ?? REPLICATE_BASE_URL;
  while (base.endsWith('/')) base = base.slice(0, -1);
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

function headers(ctx: Pick<CallContext, 'key' | 'network'>, wait: boolean): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.key.value) h['authorization'] = `Bearer ${ctx.key.value}`;
  // Held no longer than the provider's timeout allows (a create cut off by it would be retried: a second prediction).
  const seconds = Math.min(WAIT_SECONDS, Math.floor(ctx.network.timeout_ms / 1000) - 1);
  if (wait && seconds >= 1) h['prefer'] = `wait=${seconds}`;
  return h;
}

/** `owner/name` (models or deployments API) or `owner/name:version` (a pinned version). */
export function predictionTarget(ctx: Pick<CallContext, 'model' | 'key' | 'network'>): {
  url: string;
  version?: string;
} {
  const model = ctx.key.aliases[ctx.model] ?? ctx.model;
  const colon = model.indexOf(':');
  const name = colon >= 0 ? model.slice(0, colon) : model;
  const parts = name.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new ProviderError(
      'invalid_request',
      `replicate models are named owner/name (or owner/name:version), not "${model}"`,
    );
  }
  const [owner, slug] = parts as [string, string];
  if (colon >= 0) return { url: `${apiRoot(ctx)}/predictions`, version: model.slice(colon + 1) };
  const api = ctx.key.replicate_key_config?.use_deployments_endpoint ? 'deployments' : 'models';
  return { url: `${apiRoot(ctx)}/${api}/${pathSegment(owner)}/${pathSegment(slug)}/predictions` };
}

function checkPrediction(v: unknown): Prediction {
  if (!isRecord(v) || typeof v['id'] !== 'string' || typeof v['status'] !== 'string') {
    throw new ProviderError('bad_response', 'replicate answered something that is not a prediction');
  }
  // id and status checked; the other fields are read defensively by the callers.
  return v as unknown as Prediction;
}

/** Runs a prediction to its end within the provider's timeout and returns it succeeded (else a ProviderError). */
export async function runPrediction(
  ctx: CallContext,
  input: Record<string, unknown>,
  sleep: (ms: number) => Promise<void> = defaultSleep,
): Promise<Prediction> {
  const started = Date.now();
  const target = predictionTarget(ctx);
  const body = JSON.stringify(target.version ? { version: target.version, input } : { input });
  let p = checkPrediction(
    await sendJson<unknown>(ctx, { url: target.url, headers: headers(ctx, true), body }, parseGenericError),
  );
  let delay = POLL_FIRST_MS;
  const url = joinUrl(apiRoot(ctx), `/predictions/${pathSegment(p.id)}`);
  while (!ENDED.has(p.status)) {
    if (Date.now() - started + delay > ctx.network.timeout_ms || ctx.signal.aborted) {
      // Nobody will read the answer: stop paying for it.
      await cancel(ctx, url);
      if (ctx.signal.aborted) throw new ProviderError('network', 'the caller went away');
      throw new ProviderError('timeout', `replicate prediction ${p.id} did not finish in time (status ${p.status})`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, POLL_MAX_MS);
    try {
      p = checkPrediction(
        await sendJson<unknown>(ctx, { method: 'GET', url, headers: headers(ctx, false) }, parseGenericError),
      );
    } catch (err) {
      // A failed read is asked again (the prediction runs on); retrying the whole call would start a second one.
      if (!(err instanceof ProviderError) || !err.retryable) throw err;
    }
  }
  if (p.status !== 'succeeded') {
    const why = typeof p.error === 'string' && p.error ? p.error : `prediction ${p.status}`;
    // A failed prediction is the model's answer to this input (e.g. a safety refusal): not retried elsewhere.
    throw new ProviderError('upstream', `replicate prediction ${p.id} ${p.status}: ${why.slice(0, 500)}`, {
      status: p.status === 'failed' ? 422 : 409,
    });
  }
  return p;
}

/** Best effort: a prediction nobody waits for is canceled; a failure to cancel changes nothing for the caller. */
async function cancel(ctx: CallContext, predictionUrl: string): Promise<void> {
  try {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), CANCEL_TIMEOUT_MS);
    try {
      await sendJson<unknown>(
        { ...ctx, signal: controller.signal, network: { ...ctx.network, timeout_ms: CANCEL_TIMEOUT_MS } },
        { url: `${predictionUrl}/cancel`, headers: headers(ctx, false), body: '{}' },
        parseGenericError,
      );
    } finally {
      clearTimeout(timer);
    }
  } catch {
    // the prediction ends on its own at Replicate; the caller already has its answer (a timeout)
  }
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
