import type { FastifyInstance } from 'fastify';
import { chatOp, countTokensOp, embeddingsOp, responsesOp, textCompletionOp } from '../../engine/operations.ts';
import type { Runtime } from '../../runtime.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import { isPlainChatRequest } from '../../schemas/chat-quick.ts';
import { TextCompletionRequest } from '../../schemas/completions.ts';
import { CountTokensRequest } from '../../schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../schemas/embeddings.ts';
import { ResponsesRequest } from '../../schemas/responses.ts';
import { registerInferenceRoute } from './inference.ts';
import { registerModelsRoute } from './models.ts';

export function registerV1Routes(app: FastifyInstance, rt: Runtime): void {
  registerModelsRoute(app, rt);
  registerInferenceRoute(app, rt, {
    path: '/v1/chat/completions',
    schema: ChatRequest,
    quickCheck: isPlainChatRequest,
    spec: chatOp,
    sse: 'done-sentinel',
  });
  registerInferenceRoute(app, rt, {
    path: '/v1/completions',
    schema: TextCompletionRequest,
    spec: textCompletionOp,
    sse: 'done-sentinel',
  });
  registerInferenceRoute(app, rt, { path: '/v1/embeddings', schema: EmbeddingRequest, spec: embeddingsOp });
  registerInferenceRoute(app, rt, {
    path: '/v1/responses',
    schema: ResponsesRequest,
    spec: responsesOp,
    sse: 'named-events',
  });
  registerInferenceRoute(app, rt, { path: '/v1/count_tokens', schema: CountTokensRequest, spec: countTokensOp });
}
