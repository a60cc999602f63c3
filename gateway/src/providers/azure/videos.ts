// Sora 2 on Azure OpenAI: the v1 API's `/openai/v1/videos`, OpenAI's own shape, with the `api-key` header and
// the deployment as the body's model.

import { authHeaders } from '../openai/endpoints.ts';
import { openAIStyleVideos } from '../openai/videos.ts';
import { azureDeployment, azureEndpoint } from './endpoints.ts';

export const azureVideos = openAIStyleVideos({
  root: (ctx) => `${azureEndpoint(ctx)}/openai/v1`,
  headers: (key) => authHeaders({ header: 'api-key', prefix: '' }, key),
  bodyModel: (ctx) => azureDeployment(ctx.key, ctx.model),
});
