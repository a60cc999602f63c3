// `/anthropic`: the Messages API (messages, streamed or not, and count_tokens) and its model list.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { WILDCARD } from '../../config/allow-list.ts';
import { formatIssues } from '../../config/issues.ts';
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import { type AnthropicModel, anthropicModel, modelPage } from '../../formats/anthropic/models.ts';
import { countTokensOperation, ERROR_BODY, messagesOperation } from '../../formats/anthropic/operations.ts';
import { ModelInfoView, ModelListQuery, ModelListView } from '../../formats/anthropic/schema.ts';
import { GatewayError } from '../../http/errors.ts';
import type { Runtime } from '../../runtime.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { messageOf } from '../../util/errors.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import type { NativeRoutes } from './native-routes.ts';

/** A provider's model list is bounded in time: the route answers with the models it has. */
const LIST_TIMEOUT_MS = 10_000;

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

/**
 * Keys with explicit allow-lists name their models; keys with ["*"] ask the provider (as /v1/models does). A
 * provider that cannot be reached contributes its explicit models only, and is logged.
 */
async function modelsOf(rt: Runtime, e: ProviderEntry, own: string): Promise<AnthropicModel[]> {
  const created = new Map<string, number>();
  const now = Math.floor(rt.now() / 1000);
  for (const k of e.keys) if (k.models[0] !== WILDCARD) for (const m of k.models) created.set(m, now);
  const adapter = rt.adapters.get(e.name);
  const wildcardKey = e.keys.find((k) => k.models[0] === WILDCARD);
  if (adapter?.listModels && wildcardKey) {
    try {
      const listed = await adapter.listModels({
        provider: e.name,
        key: wildcardKey,
        network: { ...e.network, timeout_ms: Math.min(e.network.timeout_ms, LIST_TIMEOUT_MS) },
        signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
        dispatcher: rt.dispatcher,
      });
      for (const m of listed) created.set(m.id, m.created || now);
    } catch (err) {
      rt.logger.warn({ provider: e.name, err: messageOf(err) }, 'listing provider models failed');
    }
  }
  return [...created.keys()].sort().map((id) => anthropicModel(e.name, id, created.get(id) ?? now, own));
}
