import type { FastifyInstance } from 'fastify';
import { chatOp, countTokensOp, embeddingsOp, responsesOp, textCompletionOp } from '../../engine/operations.ts';
import type { Runtime } from '../../runtime.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import { isPlainChatRequest } from '../../schemas/chat-quick.ts';
import { TextCompletionRequest } from '../../schemas/completions.ts';
import { CountTokensRequest } from '../../schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../schemas/embeddings.ts';
import {
  ChatCompletionView,
  CountTokensView,
  EmbeddingListView,
  ResponseView,
  TextCompletionView,
} from '../../schemas/inference-views.ts';
import { ResponsesRequest } from '../../schemas/responses.ts';
import { registerInferenceRoute } from './inference.ts';
import { registerModelsRoute } from './models.ts';

const MODEL = 'openai/gpt-4o-mini';
const messages = [{ role: 'user', content: 'Say hello' }];

export function registerV1Routes(app: FastifyInstance, rt: Runtime): void {
  registerModelsRoute(app, rt);
  registerInferenceRoute(app, rt, {
    path: '/chat/completions',
    schema: ChatRequest,
    quickCheck: isPlainChatRequest,
    spec: chatOp,
    sse: 'done-sentinel',
    doc: {
      operationId: 'createChatCompletion',
      summary: 'Create a chat completion',
      tags: ['Chat Completions'],
      response: ChatCompletionView,
      example: { model: MODEL, messages },
    },
  });
  registerInferenceRoute(app, rt, {
    path: '/completions',
    schema: TextCompletionRequest,
    spec: textCompletionOp,
    sse: 'done-sentinel',
    doc: {
      operationId: 'createTextCompletion',
      summary: 'Create a text completion',
      tags: ['Text Completions'],
      response: TextCompletionView,
      example: { model: MODEL, prompt: 'Say hello' },
    },
  });
  registerInferenceRoute(app, rt, {
    path: '/embeddings',
    schema: EmbeddingRequest,
    spec: embeddingsOp,
    doc: {
      operationId: 'createEmbedding',
      summary: 'Create embeddings',
      tags: ['Embeddings'],
      response: EmbeddingListView,
      example: { model: 'openai/text-embedding-3-small', input: 'hello' },
    },
  });
  registerInferenceRoute(app, rt, {
    path: '/responses',
    schema: ResponsesRequest,
    spec: responsesOp,
    sse: 'named-events',
    doc: {
      operationId: 'createResponse',
      summary: 'Create a response (Responses API)',
      tags: ['Responses'],
      response: ResponseView,
      example: { model: MODEL, input: 'Say hello' },
    },
  });
  registerInferenceRoute(app, rt, {
    path: '/count_tokens',
    schema: CountTokensRequest,
    spec: countTokensOp,
    doc: {
      operationId: 'countTokens',
      summary: 'Count the input tokens of a chat request',
      tags: ['Count Tokens'],
      response: CountTokensView,
      example: { model: MODEL, messages },
    },
  });
}
