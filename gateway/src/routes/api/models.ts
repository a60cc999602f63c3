// /api/models, /api/models/details, /api/models/parameters, /api/models/base: the reference's model views over the
// configured providers' keys and the gateway's model catalog (engine/model-catalog.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { catalogModels, tableModels } from '../../engine/model-catalog.ts';
import { modelCandidates, tablePrice } from '../../governance/pricing/lookup.ts';
import { PRICE_TABLE } from '../../governance/pricing/table.ts';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import {
  BaseModelsQuery,
  BaseModelsView,
  ModelDetailsView,
  ModelListView,
  ModelParametersQuery,
  ModelParametersView,
  ModelsQuery,
} from '../../schemas/management-views.ts';
import { invalidInput } from '../../state/services/input.ts';

const doc = documented('Providers');

function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const r = schema.safeParse(query ?? {});
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

/** Request parameters of the unified chat request and their JSON Schemas (built once). */
let parameterSchemas: Record<string, Record<string, unknown>> | undefined;
function chatParameters(): Record<string, Record<string, unknown>> {
  if (!parameterSchemas) {
    const schema = z.toJSONSchema(ChatRequest, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, Record<string, unknown>>;
    };
    const { model: _m, messages: _msgs, ...rest } = schema.properties ?? {};
    parameterSchemas = rest;
  }
  return parameterSchemas;
}

/** The schema with `maximum` on its numeric part (a nullable number is `anyOf: [number, null]`). */
function withMaximum(s: Record<string, unknown>, max: number): Record<string, unknown> {
  if (Array.isArray(s['anyOf'])) {
    return {
      ...s,
      anyOf: s['anyOf'].map((b: unknown) =>
        b && typeof b === 'object' ? withMaximum(b as Record<string, unknown>, max) : b,
      ),
    };
  }
  return s['type'] === 'integer' || s['type'] === 'number' ? { ...s, maximum: max } : s;
}

export function registerModelRoutes(app: FastifyInstance, rt: Runtime): void {
  const list = async (query: unknown, dflt: number) => {
    const q = parseQuery(ModelsQuery(dflt), query);
    const keys = q.keys
      ?.split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '');
    const all = await catalogModels(rt, {
      query: q.query,
      provider: q.provider,
      keys,
      unfiltered: q.unfiltered === 'true',
    });
    return { all: all.slice(0, q.limit ?? dflt), total: all.length };
  };

  app.get(
    '/models',
    doc({
      operationId: 'listModelsManagement',
      summary: 'List the models the configured provider keys serve',
      querystring: ModelsQuery(5),
      responses: { 200: { description: 'The models (at most `limit`)', json: ModelListView } },
    }),
    async (req) => {
      const { all, total } = await list(req.query, 5);
      return {
        models: all.map(({ name, provider, accessible_by_keys }) => ({ name, provider, accessible_by_keys })),
        total,
      };
    },
  );
  app.get(
    '/models/details',
    doc({
      operationId: 'listModelDetailsManagement',
      summary: 'List the models with what the model catalog knows of them',
      querystring: ModelsQuery(20),
      responses: { 200: { description: 'The models (at most `limit`)', json: ModelDetailsView } },
    }),
    async (req) => {
      const { all, total } = await list(req.query, 20);
      return { models: all, total };
    },
  );
  app.get(
    '/models/parameters',
    doc({
      operationId: 'getModelParameters',
      summary: 'The request parameters a chat completion takes',
      description: 'With `model`, bounds the model sets (its largest output) are applied to the schemas.',
      querystring: ModelParametersQuery,
      responses: { 200: { description: 'Parameter definitions', json: ModelParametersView } },
    }),
    async (req) => {
      const q = parseQuery(ModelParametersQuery, req.query);
      const parameters: Record<string, Record<string, unknown>> = { ...chatParameters() };
      if (!q.model) return { parameters };
      const slash = q.model.indexOf('/');
      const provider = slash > 0 ? q.model.slice(0, slash) : undefined;
      const name = slash > 0 ? q.model.slice(slash + 1) : q.model;
      const max = provider ? tablePrice(provider, modelCandidates(name))?.max_output_tokens : undefined;
      if (max !== undefined) {
        for (const p of ['max_tokens', 'max_completion_tokens']) {
          const s = parameters[p];
          if (s) parameters[p] = withMaximum(s, max);
        }
      }
      return { model: q.model, ...(max !== undefined ? { max_output_tokens: max } : {}), parameters };
    },
  );
  app.get(
    '/models/base',
    doc({
      operationId: 'listBaseModels',
      summary: 'List the base models of the gateway’s model catalog',
      description: 'Every model the shipped catalog prices, by provider, configured or not.',
      querystring: BaseModelsQuery,
      responses: { 200: { description: 'The base models', json: BaseModelsView } },
    }),
    async (req) => {
      const q = parseQuery(BaseModelsQuery, req.query);
      const needle = q.query?.toLowerCase();
      const providers = Object.keys(PRICE_TABLE)
        .filter((p) => !q.provider || p === q.provider)
        .sort();
      const models = providers.flatMap((provider) =>
        tableModels(provider)
          .filter((name) => !needle || name.toLowerCase().includes(needle))
          .map((name) => {
            const max = tablePrice(provider, [name])?.max_output_tokens;
            return { name, provider, ...(max !== undefined ? { max_output_tokens: max } : {}) };
          }),
      );
      return { models: q.limit ? models.slice(0, q.limit) : models, total: models.length };
    },
  );
}
