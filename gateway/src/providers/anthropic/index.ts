// The Anthropic provider: Messages API for chat (plain and SSE), token counting and the model list, and the
// same-format pass-through for `/anthropic` callers (native.ts).
// No embeddings or text completions: Anthropic has neither.
import type { ModelInfo } from '../../schemas/models.ts';
import { ProviderError } from '../errors.ts';
import { joinUrl, send, sendJson } from '../shared/http.ts';
import type { CallContext, ProviderAdapter, ProviderKey } from '../types.ts';
import { anthropicBatches } from './batches.ts';
import { fromMessagesResponse, toConversation, toMessagesRequest, toTools } from './chat.ts';
import { parseAnthropicError } from './errors.ts';
import { anthropicFiles } from './files.ts';
import { anthropicNativeCalls } from './native.ts';
import { createStreamTranslator, streamChatChunks } from './stream.ts';
import type { CountTokensAnswer, MessagesResponse, ModelsPage } from './types.ts';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

const PATHS = {
  messages: '/v1/messages',
  countTokens: '/v1/messages/count_tokens',
  models: '/v1/models',
} as const;

/** The API caps a models page at 1000; one page is the common case. */
const MODELS_PAGE_LIMIT = 1000;

function url(ctx: Pick<CallContext, 'network'>, path: string): string {
  return joinUrl(ctx.network.base_url ?? ANTHROPIC_DEFAULT_BASE_URL, path);
}

function headers(key: ProviderKey): Record<string, string> {
  return { 'x-api-key': key.value, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' };
}

function upstreamModel(ctx: CallContext): string {
  return ctx.key.aliases[ctx.model] ?? ctx.model;
}

export function createAnthropicProvider(name = 'anthropic'): ProviderAdapter {
  return {
    name,
    files: anthropicFiles,
    batches: anthropicBatches,

    native: anthropicNativeCalls({ url, headers: (ctx) => headers(ctx.key), model: upstreamModel }),

    async chat(req, ctx) {
      const body = toMessagesRequest(req, upstreamModel(ctx), false);
      const res = await sendJson<MessagesResponse>(
        ctx,
        { url: url(ctx, PATHS.messages), headers: headers(ctx.key), body: JSON.stringify(body) },
        parseAnthropicError,
      );
      if (!res || !Array.isArray(res.content)) {
        throw new ProviderError('bad_response', 'anthropic returned a body that is not a message');
      }
      return fromMessagesResponse(res);
    },

    async chatStream(req, ctx) {
      const model = upstreamModel(ctx);
      const body = toMessagesRequest(req, model, true);
      const res = await send(
        ctx,
        {
          url: url(ctx, PATHS.messages),
          headers: { ...headers(ctx.key), accept: 'text/event-stream' },
          body: JSON.stringify(body),
        },
        parseAnthropicError,
      );
      const includeUsage = req.stream_options?.include_usage === true;
      return streamChatChunks(res.body, createStreamTranslator({ model, includeUsage }));
    },

    async countTokens(req, ctx) {
      const model = upstreamModel(ctx);
      const { system, messages } = toConversation(req.messages);
      const tools = toTools(req.tools);
      const body = { model, messages, ...(system ? { system } : {}), ...(tools ? { tools } : {}) };
      const res = await sendJson<CountTokensAnswer>(
        ctx,
        { url: url(ctx, PATHS.countTokens), headers: headers(ctx.key), body: JSON.stringify(body) },
        parseAnthropicError,
      );
      if (typeof res?.input_tokens !== 'number') {
        throw new ProviderError('bad_response', 'anthropic count_tokens answer has no input_tokens');
      }
      return { object: 'response.input_tokens', input_tokens: res.input_tokens, model: ctx.model };
    },

    async listModels(ctx) {
      const models: ModelInfo[] = [];
      let after: string | undefined;
      for (;;) {
        const query = `?limit=${MODELS_PAGE_LIMIT}${after ? `&after_id=${encodeURIComponent(after)}` : ''}`;
        const page = await sendJson<ModelsPage>(
          ctx,
          { method: 'GET', url: url(ctx, PATHS.models + query), headers: headers(ctx.key) },
          parseAnthropicError,
        );
        if (!page || !Array.isArray(page.data)) {
          throw new ProviderError('bad_response', 'anthropic returned a models answer without data');
        }
        for (const m of page.data) {
          const created = m.created_at ? Math.floor(Date.parse(m.created_at) / 1000) : 0;
          models.push({
            id: m.id,
            object: 'model',
            created: Number.isNaN(created) ? 0 : created,
            owned_by: 'anthropic',
          });
        }
        if (!page.has_more || !page.last_id) return models;
        after = page.last_id;
      }
    },
  };
}
