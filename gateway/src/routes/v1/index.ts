// `/v1`: the unified API (OpenAI wire format, `<provider>/<model>`). `/compat-a` mounts the same operations
// with OpenAI's own model rule (routes/compat-a.ts).
import type { FastifyInstance } from 'fastify';
import { unifiedFormat } from '../../formats/openai/format.ts';
import { type OpenAIOperations, openaiOperations } from '../../formats/openai/operations.ts';
import type { Runtime } from '../../runtime.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import { registerAsyncRoutes } from './async.ts';
import { registerAudioRoutes, registerRerankOcrRoutes } from './audio.ts';
import { registerBatchRoutes } from './batches.ts';
import { registerContainerRoutes } from './containers.ts';
import { registerFileRoutes } from './files.ts';
import { registerImageRoutes } from './images.ts';
import { registerToolExecuteRoute } from './mcp-execute.ts';
import { registerModelsRoute } from './models.ts';
import { registerRealtimeRoutes } from './realtime.ts';
import { registerVideoRoutes } from './videos.ts';

export function registerV1Routes(app: FastifyInstance, rt: Runtime): void {
  registerModelsRoute(app, rt);
  registerOpenAIOperations(app, rt, openaiOperations(unifiedFormat));
  registerRerankOcrRoutes(app, rt, unifiedFormat);
  registerToolExecuteRoute(app, rt);
  registerRealtimeRoutes(app, rt, undefined);
  registerAsyncRoutes(app, rt);
}

/** The OpenAI operations at their OpenAI paths (relative to the family's `/v1`-like prefix). */
export function registerOpenAIOperations(app: FastifyInstance, rt: Runtime, ops: OpenAIOperations): void {
  registerInferenceRoute(app, rt, '/chat/completions', ops.chat);
  registerInferenceRoute(app, rt, '/completions', ops.completions);
  registerInferenceRoute(app, rt, '/embeddings', ops.embeddings);
  registerInferenceRoute(app, rt, '/responses', ops.responses);
  registerInferenceRoute(app, rt, '/count_tokens', ops.countTokens);
  registerAudioRoutes(app, rt, ops.chat.format);
  registerImageRoutes(app, rt, ops.chat.format);
  registerVideoRoutes(app, rt, ops.chat.format);
  registerFileRoutes(app, rt);
  registerBatchRoutes(app, rt);
  registerContainerRoutes(app, rt, ops.chat.format);
}
