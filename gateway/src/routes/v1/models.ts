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

/** A provider's model list is bounded in time: a route answers with the models it has. */
const LIST_TIMEOUT_MS = 10_000;

/** A model a provider serves, with its creation time (seconds; the listing time when the provider gives none). */
export interface ServedModel {
  id: string;
  created: number;
}

/**
 * The models of one provider that callers can use, sorted by id: keys with explicit allow-lists name their
 * models; keys with ["*"] ask the provider. A provider that cannot be reached contributes its explicit models
 * only, and is logged. Every model list (`/v1`, `/compat-a`, `/anthropic`, `/genai`) is built from this.
 */
export async function servedModels(rt: Runtime, e: ProviderEntry): Promise<ServedModel[]> {
  const now = Math.floor(rt.now() / 1000);
  const created = new Map<string, number>();
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
      for (const m of listed) if (!created.has(m.id)) created.set(m.id, m.created || now);
    } catch (err) {
      rt.logger.warn({ provider: e.name, err: messageOf(err) }, 'listing provider models failed');
    }
  }
  return [...created].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, c]) => ({ id, created: c }));
}

async function modelsOf(rt: Runtime, e: ProviderEntry): Promise<ModelInfo[]> {
  const created = Math.floor(rt.now() / 1000);
  return (await servedModels(rt, e)).map((m) => ({
    id: `${e.name}/${m.id}`,
    object: 'model',
    created,
    owned_by: e.name,
  }));
}
