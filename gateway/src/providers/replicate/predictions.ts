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
const ENDED = new Set(['succeeded', 'failed', 'canceled', 'aborted']);

function apiRoot(ctx: Pick<CallContext, 'network'>): string {
  let base = ctx.network.base_url ?? REPLICATE_BASE_URL;
  while (base.endsWith('/')) base = base.slice(0, -1);
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

function headers(ctx: Pick<CallContext, 'key'>, wait: boolean): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.key.value) h['authorization'] = `Bearer ${ctx.key.value}`;
  if (wait) h['prefer'] = `wait=${WAIT_SECONDS}`;
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
  while (!ENDED.has(p.status)) {
    if (Date.now() - started + delay > ctx.network.timeout_ms) {
      throw new ProviderError('timeout', `replicate prediction ${p.id} did not finish in time (status ${p.status})`);
    }
    await sleep(delay);
    if (ctx.signal.aborted) throw new ProviderError('network', 'the caller went away');
    delay = Math.min(delay * 2, POLL_MAX_MS);
    const url = joinUrl(apiRoot(ctx), `/predictions/${pathSegment(p.id)}`);
    p = checkPrediction(
      await sendJson<unknown>(ctx, { method: 'GET', url, headers: headers(ctx, false) }, parseGenericError),
    );
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

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
