// `/anthropic`: the Messages API (messages, streamed or not, and count_tokens) and its model list.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import { type AnthropicModel, anthropicModel, modelPage } from '../../formats/anthropic/models.ts';
import { countTokensOperation, ERROR_BODY, messagesOperation } from '../../formats/anthropic/operations.ts';
import { ModelInfoView, ModelListQuery, ModelListView } from '../../formats/anthropic/schema.ts';
import { GatewayError } from '../../http/errors.ts';
import type { Runtime } from '../../runtime.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import { servedModels as providerModels } from '../v1/models.ts';
import type { NativeRoutes } from './native-routes.ts';

export const anthropicRoutes: NativeRoutes = {
  segment: 'anthropic',
  format: anthropicFormat,
  register(f, rt) {
    registerInferenceRoute(f, rt, '/v1/messages', messagesOperation);
    registerInferenceRoute(f, rt, '/v1/messages/count_tokens', countTokensOperation);
    registerModelRoutes(f, rt);
  },
};

const ModelIdParams = z.object({ model_id: z.string().min(1).max(512) });

function registerModelRoutes(f: FastifyInstance, rt: Runtime): void {
  const list = {
    operationId: 'anthropicListModels',
    summary: 'List the models callers can use on this route (Anthropic’s list shape)',
    tags: ['Anthropic'],
    querystring: ModelListQuery,
    responses: { 200: { description: 'One page of models', json: ModelListView } },
    errors: [400],
    errorBody: ERROR_BODY,
  };
  f.get('/v1/models', { config: { openapi: list } }, async (request) => {
    const q = ModelListQuery.safeParse(request.query ?? {});
    if (!q.success) throw new GatewayError('invalid_request', formatIssues(q.error));
    return modelPage(await servedModels(rt), q.data);
  });
  const one = {
    operationId: 'anthropicGetModel',
    summary: 'One model callers can use on this route',
    tags: ['Anthropic'],
    params: ModelIdParams,
    responses: { 200: { description: 'The model', json: ModelInfoView } },
    errors: [404],
    errorBody: ERROR_BODY,
  };
  f.get<{ Params: { model_id: string } }>('/v1/models/:model_id', { config: { openapi: one } }, async (request) => {
    const id = request.params.model_id;
    const found = (await servedModels(rt)).find((m) => m.id === id);
    if (!found) throw new GatewayError('not_found', 'model not found', { param: 'model_id' });
    return found;
  });
}

/** Every configured provider's models, the route's own provider first, each group sorted. */
async function servedModels(rt: Runtime): Promise<AnthropicModel[]> {
  const own = anthropicFormat.defaultProvider ?? 'anthropic';
  const entries = [...rt.state.snapshot.providers.values()].sort(
    (a, b) => Number(b.name === own) - Number(a.name === own) || a.name.localeCompare(b.name),
  );
  const lists = await Promise.all(entries.map((e) => modelsOf(rt, e, own)));
  return lists.flat();
}

async function modelsOf(rt: Runtime, e: ProviderEntry, own: string): Promise<AnthropicModel[]> {
  return (await providerModels(rt, e)).map((m) => anthropicModel(e.name, m.id, m.created, own));
}
