// The OpenTelemetry gen_ai client metrics in Prometheus form, beside the gateway_* ones on the same registry:
// gen_ai.client.token.usage, gen_ai.client.operation.duration and gen_ai.client.operation.time_to_first_chunk
// (dots become underscores, seconds get their unit suffix). Buckets are the conventions' advised boundaries.
import { Histogram, type Registry } from 'prom-client';

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFC_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const BASE = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'] as const;

export interface GenAiLabels {
  operation: string;
  provider: string;
  /** Already bounded: a configured model, else `other`. */
  model: string;
}

export class GenAiMetrics {
  readonly #tokens: Histogram<(typeof BASE)[number] | 'gen_ai_token_type'>;
  readonly #duration: Histogram<(typeof BASE)[number] | 'error_type'>;
  readonly #firstChunk: Histogram<(typeof BASE)[number]>;

  constructor(registry: Registry) {
    this.#tokens = new Histogram({
      name: 'gen_ai_client_token_usage',
      help: 'Tokens used per inference request, by token type (input, output)',
      labelNames: [...BASE, 'gen_ai_token_type'],
      buckets: TOKEN_BUCKETS,
      registers: [registry],
    });
    this.#duration = new Histogram({
      name: 'gen_ai_client_operation_duration_seconds',
      help: 'Duration of an inference request through the gateway, retries, fallbacks and the whole stream included',
      labelNames: [...BASE, 'error_type'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.#firstChunk = new Histogram({
      name: 'gen_ai_client_operation_time_to_first_chunk_seconds',
      help: 'Time from the request reaching the gateway to the first chunk of a streamed answer',
      labelNames: [...BASE],
      buckets: TTFC_BUCKETS,
      registers: [registry],
    });
  }

  record(
    l: GenAiLabels,
    seconds: number,
    errorType: string,
    inputTokens: number | undefined,
    outputTokens: number | undefined,
    firstChunkSeconds: number | undefined,
  ): void {
    const base = {
      gen_ai_operation_name: l.operation,
      gen_ai_provider_name: l.provider,
      gen_ai_request_model: l.model,
    };
    this.#duration.observe({ ...base, error_type: errorType }, seconds);
    if (inputTokens !== undefined) this.#tokens.observe({ ...base, gen_ai_token_type: 'input' }, inputTokens);
    if (outputTokens !== undefined) this.#tokens.observe({ ...base, gen_ai_token_type: 'output' }, outputTokens);
    if (firstChunkSeconds !== undefined) this.#firstChunk.observe(base, firstChunkSeconds);
  }
}
