// /api/logs/histogram and its variants (reference paths and shapes): thin adapters over LogHistograms; a read
// flushes this pod's buffered rows first, like the listing.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { type HistogramKind, HistogramQuery } from '../../state/services/log-histograms.ts';

const doc = documented('Logging');

const Timestamp = z.string().describe('Start of the bucket (RFC 3339, UTC)');
const Count = z.int();
const Usd = z.number().describe('USD');
const Ms = z.number().describe('milliseconds');

const Tokens = { prompt_tokens: Count, completion_tokens: Count, total_tokens: Count };
const Latency = {
  avg_latency: Ms,
  p90_latency: Ms,
  p95_latency: Ms,
  p99_latency: Ms,
  total_requests: Count,
};
const ModelUsage = z.strictObject({ total: Count, success: Count, error: Count });

/** An answer: buckets of `bucket`, their width, and for breakdowns the keys present (`models` or `providers`). */
function result(bucket: z.ZodRawShape, list?: 'models' | 'providers') {
  return z.strictObject({
    buckets: z.array(z.strictObject({ timestamp: Timestamp, ...bucket })),
    bucket_size_seconds: Count,
    ...(list
      ? { [list]: z.array(z.string()).describe(`The ${list} present, the most used first up to 50, then "other"`) }
      : {}),
  });
}

const ROUTES: { path: string; kind: HistogramKind; operationId: string; summary: string; json: z.ZodType }[] = [
  {
    path: '/logs/histogram',
    kind: 'requests',
    operationId: 'getLogsHistogram',
    summary: 'Request counts over time',
    json: result({ count: Count, success: Count, error: Count }),
  },
  {
    path: '/logs/histogram/tokens',
    kind: 'tokens',
    operationId: 'getLogsTokenHistogram',
    summary: 'Token usage over time',
    json: result(Tokens),
  },
  {
    path: '/logs/histogram/cost',
    kind: 'cost',
    operationId: 'getLogsCostHistogram',
    summary: 'Cost over time by model',
    json: result({ total_cost: Usd, by_model: z.record(z.string(), Usd) }, 'models'),
  },
  {
    path: '/logs/histogram/models',
    kind: 'models',
    operationId: 'getLogsModelHistogram',
    summary: 'Requests over time by model, with successes and errors',
    json: result({ by_model: z.record(z.string(), ModelUsage) }, 'models'),
  },
  {
    path: '/logs/histogram/latency',
    kind: 'latency',
    operationId: 'getLogsLatencyHistogram',
    summary: 'Latency over time: average and percentiles',
    json: result(Latency),
  },
  {
    path: '/logs/histogram/cost/by-provider',
    kind: 'cost_by_provider',
    operationId: 'getLogsProviderCostHistogram',
    summary: 'Cost over time by provider',
    json: result({ total_cost: Usd, by_provider: z.record(z.string(), Usd) }, 'providers'),
  },
  {
    path: '/logs/histogram/tokens/by-provider',
    kind: 'tokens_by_provider',
    operationId: 'getLogsProviderTokenHistogram',
    summary: 'Token usage over time by provider',
    json: result({ by_provider: z.record(z.string(), z.strictObject(Tokens)) }, 'providers'),
  },
  {
    path: '/logs/histogram/latency/by-provider',
    kind: 'latency_by_provider',
    operationId: 'getLogsProviderLatencyHistogram',
    summary: 'Latency over time by provider',
    json: result({ by_provider: z.record(z.string(), z.strictObject(Latency)) }, 'providers'),
  },
];

const DESCRIPTION =
  'The request logs matching the filters of GET /api/logs, in time buckets over start_time..end_time (default: ' +
  'the last 24 hours; at most 366 days). Bucket width: bucket_size_seconds, or the smallest that gives at most ' +
  '120 buckets; empty buckets are included. Rows without a provider or model count as "unknown".';

export function registerLogHistogramRoutes(app: FastifyInstance, rt: Runtime): void {
  for (const r of ROUTES) {
    app.get(
      r.path,
      doc({
        operationId: r.operationId,
        summary: r.summary,
        description: DESCRIPTION,
        querystring: HistogramQuery,
        responses: { 200: { description: r.summary, json: r.json } },
      }),
      async (req) => {
        await rt.logWriter.flush();
        return rt.logStore.histograms.histogram(r.kind, req.query, rt.now());
      },
    );
  }
}
