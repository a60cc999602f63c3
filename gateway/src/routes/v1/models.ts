// GET /v1/models: the models callers can use, as `<provider>/<model>` ids, from every configured provider.
import type { FastifyInstance } from 'fastify';
import { WILDCARD } from '../../config/allow-list.ts';
import type { Runtime } from '../../runtime.ts';
import { ModelListView, ModelsQuery } from '../../schemas/inference-views.ts';
import type { ModelInfo, ModelList } from '../../schemas/models.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { messageOf } from '../../util/errors.ts';

export function registerModelsRoute(app: FastifyInstance, rt: Runtime): void {
  const openapi = {
    operationId: 'listModels',
    summary: 'List the models callers can use, as <provider>/<model>',
    tags: ['Models'],
    querystring: ModelsQuery,
    responses: { 200: { description: 'The models', json: ModelListView } },
  };
  const opts = { config: { openapi } };
  app.get<{ Querystring: { provider?: string } }>('/models', opts, async (request): Promise<ModelList> => {
    const only = request.query.provider;
    const entries = [...rt.state.snapshot.providers.values()].filter((e) => !only || e.name === only);
    const lists = await Promise.all(entries.map((e) => modelsOf(rt, e)));
    return { object: 'list', data: lists.flat() };
  });
}

/**
 * Keys with explicit allow-lists name their models; keys with ["*"] ask the provider. A provider that
 * cannot be reached contributes its explicit models only, and is logged.
 */
async function modelsOf(rt: Runtime, e: ProviderEntry): Promise<ModelInfo[]> {
  const ids = new Set<string>();
  let open = false;
  for (const k of e.keys) {
    if (k.models[0] === WILDCARD) open = true;
    else for (const m of k.models) ids.add(m);
  }
  const adapter = rt.adapters.get(e.name);
  const wildcardKey = e.keys.find((k) => k.models[0] === WILDCARD);
  if (open && adapter?.listModels && wildcardKey) {
    try {
      const listed = await adapter.listModels({
        provider: e.name,
        key: wildcardKey,
        network: { ...e.network, timeout_ms: Math.min(e.network.timeout_ms, 10_000) },
        signal: AbortSignal.timeout(10_000),
        dispatcher: rt.dispatcher,
      });
      for (const m of listed) ids.add(m.id);
    } catch (err) {
      rt.logger.warn({ provider: e.name, err: messageOf(err) }, 'listing provider models failed');
    }
  }
  const created = Math.floor(rt.now() / 1000);
  return [...ids].sort().map((id) => ({ id: `${e.name}/${id}`, object: 'model', created, owned_by: e.name }));
}
