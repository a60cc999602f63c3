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
    path: '/chat/completions',
    schema: ChatRequest,
    quickCheck: isPlainChatRequest,
    spec: chatOp,
    sse: 'done-sentinel',
  });
  registerInferenceRoute(app, rt, {
    path: '/completions',
    schema: TextCompletionRequest,
    spec: textCompletionOp,
    sse: 'done-sentinel',
  });
  registerInferenceRoute(app, rt, { path: '/embeddings', schema: EmbeddingRequest, spec: embeddingsOp });
  registerInferenceRoute(app, rt, {
    path: '/responses',
    schema: ResponsesRequest,
    spec: responsesOp,
    sse: 'named-events',
  });
  registerInferenceRoute(app, rt, { path: '/count_tokens', schema: CountTokensRequest, spec: countTokensOp });
}
