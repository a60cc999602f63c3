// `/compat-a`: the OpenAI API as OpenAI serves it (a bare model goes to `openai`), at OpenAI's paths and at Azure
// OpenAI's deployment paths (`/openai/deployments/{deployment}/...?api-version=`), where the deployment names
// the model and a bare name goes to `azure`.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { audioOperations } from '../formats/openai/audio.ts';
import { openaiFormat } from '../formats/openai/format.ts';
import { openaiOperations } from '../formats/openai/operations.ts';
import type { Decoded, FormatOperation, RequestParts } from '../formats/types.ts';
import { Form } from '../http/multipart.ts';
import type { Runtime } from '../runtime.ts';
import { registerInferenceRoute } from './inference-route.ts';
import { registerOpenAIOperations } from './v1/index.ts';
import { registerModelsRoute } from './v1/models.ts';
import { registerRealtimeRoutes } from './v1/realtime.ts';

const ops = openaiOperations(openaiFormat);
const audio = audioOperations(openaiFormat);

/** The routes of an OpenAI-format mount, relative to it: `/v1/...` and the Azure deployment paths. */
export function registerCompatRoutes(app: FastifyInstance, rt: Runtime): void {
  app.register(
    async (v1) => {
      registerModelsRoute(v1, rt);
      registerOpenAIOperations(v1, rt, ops);
      registerRealtimeRoutes(v1, rt, 'openai');
    },
    { prefix: '/v1' },
  );
  app.register(
    async (azure) => {
      registerInferenceRoute(azure, rt, '/chat/completions', deployment(ops.chat, 'AzureChatCompletion'));
      registerInferenceRoute(azure, rt, '/completions', deployment(ops.completions, 'AzureTextCompletion'));
      registerInferenceRoute(azure, rt, '/embeddings', deployment(ops.embeddings, 'AzureEmbedding'));
      registerInferenceRoute(azure, rt, '/responses', deployment(ops.responses, 'AzureResponse'));
      registerInferenceRoute(azure, rt, '/audio/speech', deployment(audio.speech, 'AzureSpeech'));
      registerInferenceRoute(
        azure,
        rt,
        '/audio/transcriptions',
        deployment(audio.transcriptions, 'AzureTranscription'),
      );
      registerInferenceRoute(azure, rt, '/audio/translations', deployment(audio.translations, 'AzureTranslation'));
    },
    { prefix: '/openai/deployments/:deployment' },
  );
}

/** An OpenAI operation at an Azure deployment path: the deployment is the model (the body's is ignored). */
function deployment<Req extends { model: string }, Res, Chunk>(
  op: FormatOperation<Req, Res, Chunk>,
  operationId: string,
): FormatOperation<Req, Res, Chunk> {
  return {
    ...op,
    doc: {
      ...op.doc,
      operationId: `create${operationId}`,
      description: AZURE_DOC,
      params: DeploymentParams,
      querystring: ApiVersionQuery,
    },
    decode(parts: RequestParts): Decoded<Req> {
      const name = parts.params['deployment'] ?? '';
      const body = parts.body;
      // Azure's clients may leave `model` out: the deployment names it (in a form too: audio uploads).
      if (body instanceof Form) body.fields.set('model', [name]);
      const withModel =
        body && typeof body === 'object' && !Array.isArray(body) && !(body instanceof Form)
          ? { ...body, model: name }
          : body;
      const d = op.decode({ ...parts, body: withModel });
      return { ...d, model: name, defaultProvider: 'azure' };
    },
  };
}

const DeploymentParams = z.object({ deployment: z.string().describe('The Azure deployment (the model)') });
const ApiVersionQuery = z.object({ 'api-version': z.string().optional() });

const AZURE_DOC =
  'Azure OpenAI’s deployment path: the deployment names the model (a bare name goes to the `azure` provider, ' +
  '`<provider>/<model>` is not possible in a path segment); `api-version` is accepted and ignored.';
