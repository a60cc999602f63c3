// The AWS Bedrock provider: Converse / ConverseStream for chat, InvokeModel for Titan and Cohere embeddings,
// CountTokens, and the same-format pass-through for `/cloudconv` callers (native.ts). Every request is
// SigV4-signed with the key's static credentials or, without them, the AWS default chain's (credentials.ts). No model list: it lives on another host (the Bedrock control
// plane) and needs other permissions.
import { randomUUID } from 'node:crypto';
import type { EmbeddingResponse } from '../../schemas/embeddings.ts';
import { ProviderError } from '../errors.ts';
import type { UpstreamResponse } from '../shared/http.ts';
import type { ProviderAdapter } from '../types.ts';
import { fromConverseResponse, toConversation, toConverseRequest, toToolConfig } from './chat.ts';
import { createCredentialSource } from './credentials.ts';
import {
  COHERE_MAX_TEXTS,
  cohereBody,
  embeddingFamily,
  parseCohere,
  parseTitan,
  requireTexts,
  titanBody,
  toEmbeddingResponse,
} from './embeddings.ts';
import { bedrockImages } from './images.ts';
import { createBedrockNativeCalls } from './native.ts';
import { bedrockRerank } from './rerank.ts';
import { bedrockModelId, createBedrockPost } from './signing.ts';
import { createStreamTranslator, streamChatChunks } from './stream.ts';
import type { ConverseResponse, CountTokensAnswer } from './types.ts';

async function readJson<T>(res: UpstreamResponse): Promise<T> {
  try {
    // Shapes are checked by the callers before use.
    return (await res.body.json()) as T;
  } catch (err) {
    // A body over network_config.max_response_size_mb is already a ProviderError.
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('bad_response', 'bedrock returned a body that is not JSON', { cause: err });
  }
}

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Converse answers carry no id; the AWS request id is unique and lets operators find the call in AWS logs. */
function responseId(res: UpstreamResponse): string {
  return `chatcmpl-${header(res, 'x-amzn-requestid') ?? randomUUID()}`;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function createBedrockProvider(name = 'bedrock'): ProviderAdapter {
  // Credentials from the default chain are cached per adapter instance (per Runtime), not globally.
  const credentials = createCredentialSource();
  const post = createBedrockPost(credentials);
  return {
    name,

    rerank: bedrockRerank(credentials),
    ...bedrockImages(post),

    native: createBedrockNativeCalls(post),

    async chat(req, ctx) {
      const res = await post(ctx, 'converse', JSON.stringify(toConverseRequest(req)));
      const body = await readJson<ConverseResponse>(res);
      if (!body || typeof body !== 'object' || !body.output?.message) {
        throw new ProviderError('bad_response', 'bedrock converse answer has no output message');
      }
      return fromConverseResponse(body, { id: responseId(res), model: ctx.model, created: nowSeconds() });
    },

    async chatStream(req, ctx) {
      const res = await post(ctx, 'converse-stream', JSON.stringify(toConverseRequest(req)));
      const translator = createStreamTranslator({
        id: responseId(res),
        model: ctx.model,
        created: nowSeconds(),
        includeUsage: req.stream_options?.include_usage === true,
      });
      return streamChatChunks(res.body, translator);
    },

    async embeddings(req, ctx): Promise<EmbeddingResponse> {
      const texts = requireTexts(req);
      const family = embeddingFamily(ctx.model, bedrockModelId(ctx));
      if (family === 'titan') {
        // Titan embeds one text per call; the calls run side by side.
        const results = await Promise.all(
          texts.map(async (t) =>
            parseTitan(await readJson<unknown>(await post(ctx, 'invoke', JSON.stringify(titanBody(t, req))))),
          ),
        );
        const tokens = results.reduce((n, r) => n + r.tokens, 0);
        return toEmbeddingResponse(
          results.map((r) => r.embedding),
          tokens,
          ctx.model,
          req.encoding_format,
        );
      }
      if (family === 'cohere') {
        const vectors: number[][] = [];
        let tokens = 0;
        for (let i = 0; i < texts.length; i += COHERE_MAX_TEXTS) {
          const batch = texts.slice(i, i + COHERE_MAX_TEXTS);
          const res = await post(ctx, 'invoke', JSON.stringify(cohereBody(batch, req)));
          // Cohere's body has no token count; Bedrock reports it in a header.
          tokens += Number(header(res, 'x-amzn-bedrock-input-token-count') ?? 0) || 0;
          vectors.push(...parseCohere(await readJson<unknown>(res), batch.length));
        }
        return toEmbeddingResponse(vectors, tokens, ctx.model, req.encoding_format);
      }
      throw new ProviderError(
        'invalid_request',
        `bedrock embeddings support Titan and Cohere models, not '${ctx.model}'`,
      );
    },

    async countTokens(req, ctx) {
      const { system, messages } = toConversation(req.messages);
      const toolConfig = toToolConfig(req.tools, undefined, messages);
      const converse = { messages, ...(system ? { system } : {}), ...(toolConfig ? { toolConfig } : {}) };
      const res = await post(ctx, 'count-tokens', JSON.stringify({ input: { converse } }));
      const body = await readJson<CountTokensAnswer>(res);
      if (typeof body?.inputTokens !== 'number') {
        throw new ProviderError('bad_response', 'bedrock count-tokens answer has no inputTokens');
      }
      return { object: 'response.input_tokens', input_tokens: body.inputTokens, model: ctx.model };
    },
  };
}
