// /api/governance/model-configs and /api/governance/providers: budgets and rate limits per model and per provider,
// at the reference's paths with its shapes (`{model_configs, count}`, `{message, model_config}`, 200 on create).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../../http/openapi.ts';
import type { Runtime } from '../../../runtime.ts';
import {
  IdParams,
  Message,
  ModelConfigChanged,
  ModelConfigList,
  ModelConfigOne,
  PathParam,
  ProviderGovernanceList,
  ProviderGovernanceView,
} from '../../../schemas/api-views.ts';
import { ModelConfigBody, ProviderGovernanceBody } from '../../../state/services/governance/model-limits/input.ts';

const doc = documented('Governance');
const MODEL_CONFIGS = '/governance/model-configs';
const PROVIDERS = '/governance/providers';
const ProviderNameParams = z.object({ provider_name: PathParam });

type ById = { Params: { id: string } };
type ByProvider = { Params: { provider_name: string } };

export function registerModelLimitRoutes(app: FastifyInstance, rt: Runtime): void {
  const configs = rt.state.modelConfigs;
  const providers = rt.state.providerGovernance;

  app.get(
    MODEL_CONFIGS,
    doc({
      operationId: 'listModelConfigs',
      summary: 'List model configs (budgets and rate limits per model)',
      responses: { 200: { description: 'Every model config', json: ModelConfigList } },
    }),
    async () => {
      const list = await configs.list();
      return { model_configs: list, count: list.length };
    },
  );
  app.post(
    MODEL_CONFIGS,
    doc({
      operationId: 'createModelConfig',
      summary: 'Create a model config',
      description:
        'A budget and a rate limit for every request to `model_name` (on `provider`, or on every provider), with ' +
        'or without a virtual key.',
      body: ModelConfigBody,
      responses: { 200: { description: 'The model config', json: ModelConfigChanged } },
      errors: [409],
    }),
    async (req) => ({ message: 'model config created', model_config: await configs.create(req.body) }),
  );
  app.get<ById>(
    `${MODEL_CONFIGS}/:id`,
    doc({
      operationId: 'getModelConfig',
      summary: 'Get a model config',
      params: IdParams,
      responses: { 200: { description: 'The model config', json: ModelConfigOne } },
    }),
    async (req) => ({ model_config: await configs.get(req.params.id) }),
  );
  app.put<ById>(
    `${MODEL_CONFIGS}/:id`,
    doc({
      operationId: 'updateModelConfig',
      summary: 'Update a model config',
      description: 'Changes the fields the body names; budget and rate-limit fields merge, `null` removes one.',
      params: IdParams,
      body: ModelConfigBody,
      responses: { 200: { description: 'The model config', json: ModelConfigChanged } },
      errors: [409],
    }),
    async (req) => ({ message: 'model config updated', model_config: await configs.update(req.params.id, req.body) }),
  );
  app.delete<ById>(
    `${MODEL_CONFIGS}/:id`,
    doc({
      operationId: 'deleteModelConfig',
      summary: 'Delete a model config',
      params: IdParams,
      responses: { 200: { description: 'Deleted', json: Message } },
    }),
    async (req) => {
      await configs.delete(req.params.id);
      return { message: 'model config deleted' };
    },
  );

  app.get(
    PROVIDERS,
    doc({
      operationId: 'listProviderGovernance',
      summary: 'List provider governance (budgets and rate limits per provider)',
      responses: { 200: { description: 'Every provider with governance settings', json: ProviderGovernanceList } },
    }),
    async () => {
      const list = await providers.list();
      return { providers: list, count: list.length };
    },
  );
  app.put<ByProvider>(
    `${PROVIDERS}/:provider_name`,
    doc({
      operationId: 'updateProviderGovernance',
      summary: "Set a provider's budget and rate limit",
      description:
        'Creates or changes the settings of a configured provider; budget and rate-limit fields merge, `null` removes one.',
      params: ProviderNameParams,
      body: ProviderGovernanceBody,
      responses: { 200: { description: "The provider's governance", json: ProviderGovernanceView } },
    }),
    async (req) => providers.update(req.params.provider_name, req.body),
  );
  app.delete<ByProvider>(
    `${PROVIDERS}/:provider_name`,
    doc({
      operationId: 'deleteProviderGovernance',
      summary: "Remove a provider's budget and rate limit",
      params: ProviderNameParams,
      responses: { 200: { description: 'Deleted', json: Message } },
    }),
    async (req) => {
      await providers.delete(req.params.provider_name);
      return { message: 'provider governance deleted' };
    },
  );
}
