// What the compat plugin knows about providers and models (the spec is silent; docs/decisions.md says why):
// which models answer only chat, which only the Responses API, and which chat parameters a target refuses.
import type { ChatRequest } from '../../schemas/chat.ts';

/** Providers that speak OpenAI's own API (its model names, its rules on parameters). */
const OPENAI_APIS = new Set(['openai', 'azure']);

/** The last path segment of a model id, lower-cased (`openai/o3-pro` and `o3-pro` are one model). */
function base(model: string): string {
  return (model.split('/').at(-1) ?? model).toLowerCase();
}

/** OpenAI's legacy completions endpoint serves only these families; every other OpenAI model is chat-only. */
const TEXT_COMPLETION_MODELS = /(^|-)(instruct|davinci|babbage)(-|$)/;

/**
 * True when a text completion for this model must go through chat: the provider has no completions API at all,
 * or it is OpenAI's API and the model is not one of the legacy completion models.
 */
export function isChatOnly(provider: string, model: string, hasTextCompletions: boolean): boolean {
  if (!hasTextCompletions) return true;
  return OPENAI_APIS.has(provider) && !TEXT_COMPLETION_MODELS.test(base(model));
}

/** OpenAI models served only by the Responses API (`/v1/chat/completions` answers 404 for them). */
const RESPONSES_ONLY_MODELS =
  /^(o1-pro|o3-pro|o3-deep-research|o4-mini-deep-research|codex-mini|computer-use-preview|gpt-5(\.\d+)?-(pro|codex))(-|$)/;

export function isResponsesOnly(provider: string, model: string): boolean {
  return OPENAI_APIS.has(provider) && RESPONSES_ONLY_MODELS.test(base(model));
}

/** OpenAI reasoning models (o-series, gpt-5 except its chat variant): no sampling parameters, no max_tokens. */
function isOpenAIReasoning(provider: string, model: string): boolean {
  const m = base(model);
  return OPENAI_APIS.has(provider) && (/^o\d/.test(m) || (/^gpt-5/.test(m) && !/^gpt-5(\.\d+)?-chat/.test(m)));
}

/** Parameters OpenAI's reasoning models refuse with 400 `unsupported_parameter`. */
const REASONING_REFUSED = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'logit_bias',
] as const;

/** Providers whose chat API returns one choice: the gateway refuses `n > 1` for them. */
const SINGLE_CHOICE = new Set(['anthropic', 'bedrock', 'vertex', 'cohere']);

/**
 * The request without the parameters this provider and model refuse, and the names of what was removed (for the
 * response header). Pure; returns the same object when nothing is dropped.
 */
export function dropUnsupported(
  provider: string,
  model: string,
  req: ChatRequest,
): { req: ChatRequest; dropped: string[] } {
  const dropped: string[] = [];
  let out: ChatRequest | undefined;
  const drop = (field: string) => {
    out ??= { ...req };
    delete out[field];
    dropped.push(field);
  };
  if (isOpenAIReasoning(provider, model)) {
    for (const f of REASONING_REFUSED) if (req[f] != null) drop(f);
    // Renamed rather than dropped: reasoning models take only max_completion_tokens.
    if (req.max_tokens != null) {
      const kept = req.max_completion_tokens ?? req.max_tokens;
      drop('max_tokens');
      if (out) out.max_completion_tokens = kept;
    }
  }
  if (SINGLE_CHOICE.has(provider) && req.n != null && req.n > 1) drop('n');
  // Claude models from 4.5 on refuse temperature and top_p together: temperature is kept.
  if ((provider === 'anthropic' || provider === 'bedrock' || provider === 'vertex') && req.temperature != null) {
    if (req.top_p != null && /claude/.test(base(model))) drop('top_p');
  }
  return { req: out ?? req, dropped };
}

/** Chat parameters the Responses API has no field for: refused, or dropped with should_drop_params. */
export const NOT_IN_RESPONSES = [
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'seed',
] as const;
