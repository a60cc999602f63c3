// Files and batches on Azure OpenAI's v1 API (`/openai/v1/files`, `/openai/v1/batches`): OpenAI's own shapes
// with the `api-key` header. A batch's JSONL lines name deployments as their `model`.
import { openAIStyleBatches } from '../openai/batches.ts';
import { authHeaders } from '../openai/endpoints.ts';
import { type ApiHost, openAIStyleFiles } from '../openai/files.ts';
import { azureEndpoint } from './endpoints.ts';

const host: ApiHost = {
  root: (ctx) => `${azureEndpoint(ctx)}/openai/v1`,
  headers: (key) => authHeaders({ header: 'api-key', prefix: '' }, key),
};

export const azureFiles = openAIStyleFiles(host);
export const azureBatches = openAIStyleBatches(host);
