// Azure OpenAI URLs: deployment-scoped routes with a dated api-version, and the v1 routes for Responses and
// models. Pure functions of the call context so they are tested without I/O.
import { ProviderError } from '../errors.ts';
import { authHeaders, type OpenAIRoute, type OpenAIStyleEndpoints, type RouteContext } from '../openai/endpoints.ts';
import { pathSegment } from '../shared/url.ts';
import type { ProviderKey } from '../types.ts';

/** Latest GA data-plane api-version for the deployment routes; a key's `azure_key_config.api_version` wins. */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

const DEPLOYMENT_PATHS: Partial<Record<OpenAIRoute, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  image_generations: '/images/generations',
  image_edits: '/images/edits',
};

/** Routes of the versionless v1 API (GA since 2025); Responses exists only there. */
const V1_PATHS: Partial<Record<OpenAIRoute, string>> = {
  responses: '/openai/v1/responses',
  models: '/openai/v1/models',
};

/** The resource URL: `network.base_url` when set (tests, proxies), else the key's endpoint. */
export function azureEndpoint(ctx: Pick<RouteContext, 'key' | 'network'>): string {
  let endpoint = ctx.network.base_url ?? ctx.key.azure_key_config?.endpoint;
  if (!endpoint) {
    throw new ProviderError(
      'invalid_request',
      `azure key "${ctx.key.name}" has no endpoint: set azure_key_config.endpoint on the key or network_config.base_url on the provider`,
    );
  }
  while (endpoint.endsWith('/')) endpoint = endpoint.slice(0, -1);
  // users often paste the v1 client base URL (`https://x.openai.azure.com/openai/v1`): keep only the resource
  return endpoint.replace(/\/openai(\/v1)?$/, '');
}

/** The deployment serving a model: the key's alias for it, else the model name itself. */
export function azureDeployment(key: ProviderKey, model: string): string {
  return key.aliases[model] ?? model;
}

export const azureEndpoints: OpenAIStyleEndpoints = {
  url(route, ctx) {
    const endpoint = azureEndpoint(ctx);
    const v1 = V1_PATHS[route];
    if (v1) return endpoint + v1;
    const path = DEPLOYMENT_PATHS[route];
    if (!path || ctx.model === undefined) {
      throw new ProviderError('unsupported_operation', `azure has no ${route} route`);
    }
    const deployment = pathSegment(azureDeployment(ctx.key, ctx.model));
    const version = encodeURIComponent(ctx.key.azure_key_config?.api_version ?? AZURE_DEFAULT_API_VERSION);
    return `${endpoint}/openai/deployments/${deployment}${path}?api-version=${version}`;
  },
  headers: (key) => authHeaders({ header: 'api-key', prefix: '' }, key),
  // the v1 routes select the deployment through the body's `model`; deployment routes ignore it
  bodyModel: (ctx) => azureDeployment(ctx.key, ctx.model),
};
