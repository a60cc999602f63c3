// Gateway names in the words of the OpenTelemetry gen_ai semantic conventions (pure functions). The attribute
// names are written out here: the semantic-conventions package marks its gen_ai constants as moved elsewhere.
import type { ProviderEntry } from '../../state/snapshot.ts';

export const ATTR = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  maxTokens: 'gen_ai.request.max_tokens',
  temperature: 'gen_ai.request.temperature',
  stream: 'gen_ai.request.stream',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  // The gateway's own (no convention names them).
  requestId: 'gateway.request.id',
  virtualKeyId: 'gateway.virtual_key.id',
  teamId: 'gateway.team.id',
  customerId: 'gateway.customer.id',
  modelRequested: 'gateway.original_model_requested',
  gatewayProvider: 'gateway.provider',
  requestType: 'gateway.request_type',
  selectedKeyId: 'gateway.selected_key_id',
  selectedKeyName: 'gateway.selected_key_name',
  attemptTrail: 'gateway.attempt_trail',
  attemptCount: 'gateway.attempt_count',
  fallbackIndex: 'gateway.fallback_index',
  keyId: 'gateway.key.id',
  keyName: 'gateway.key.name',
  attempt: 'gateway.attempt',
  attemptOutcome: 'gateway.attempt.outcome',
  attemptNext: 'gateway.attempt.next',
} as const;

/** The conventions' well-known provider names; other providers keep the gateway's name. */
const PROVIDERS: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
};

export function providerName(provider: string): string {
  return PROVIDERS[provider] ?? provider;
}

/** The conventions' operation for a gateway request type; types they do not name keep the gateway's word. */
export function operationName(requestType: string): string {
  switch (requestType) {
    case 'chat_completion':
    case 'responses':
      return 'chat';
    case 'text_completion':
      return 'text_completion';
    case 'embedding':
      return 'embeddings';
    default:
      return requestType;
  }
}

/** Models a provider's keys name (allow-lists, alias names and targets): the bounded set metrics label by. */
const configured = new WeakMap<ProviderEntry, ReadonlySet<string>>();

export function modelLabel(entry: ProviderEntry | undefined, model: string): string {
  if (!entry || model === '') return 'other';
  let set = configured.get(entry);
  if (!set) {
    const s = new Set<string>();
    for (const k of entry.keys) {
      for (const m of k.models) if (m !== '*') s.add(m);
      for (const [alias, target] of Object.entries(k.aliases)) {
        s.add(alias);
        s.add(target);
      }
    }
    set = s;
    configured.set(entry, s);
  }
  return set.has(model) ? model : 'other';
}

/** `max_tokens` (or the newer names) and `temperature` from a request body, when they are numbers. */
export function requestParams(body: unknown): { maxTokens?: number; temperature?: number } {
  if (body === null || typeof body !== 'object') return {};
  const get = (name: string): number | undefined => {
    const v: unknown = Reflect.get(body, name);
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };
  const out: { maxTokens?: number; temperature?: number } = {};
  const maxTokens = get('max_tokens') ?? get('max_completion_tokens') ?? get('max_output_tokens');
  if (maxTokens !== undefined) out.maxTokens = maxTokens;
  const temperature = get('temperature');
  if (temperature !== undefined) out.temperature = temperature;
  return out;
}

/** The model part of `<provider>/<model>` (the whole string when it has no provider in front). */
export function modelPart(model: string): string {
  const slash = model.indexOf('/');
  return slash > 0 ? model.slice(slash + 1) : model;
}
