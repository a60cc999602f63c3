// Containers on Azure OpenAI's v1 API (`{endpoint}/openai/v1/containers`): OpenAI's shapes with the `api-key`
// header (Microsoft Foundry's REST reference lists the same calls as OpenAI's).
import { openAIStyleContainers } from '../openai/containers.ts';
import { authHeaders } from '../openai/endpoints.ts';
import { azureEndpoint } from './endpoints.ts';

export const azureContainers = openAIStyleContainers({
  root: (ctx) => `${azureEndpoint(ctx)}/openai/v1`,
  headers: (key) => authHeaders({ header: 'api-key', prefix: '' }, key),
});
