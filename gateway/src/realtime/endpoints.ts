// Where a provider's realtime API lives: the WebSocket URL of a session, the WebRTC calls and client-secret
// URLs, and the auth header. Built from the provider's configuration only (network_config.base_url or the key's
// Azure endpoint), never from anything the caller sent. Providers without a realtime API have no entry.
import { azureDeployment, azureEndpoint } from '../providers/azure/endpoints.ts';
import { apiRoot } from '../providers/openai/endpoints.ts';
import { OPENAI_DEFAULT_BASE_URL } from '../providers/openai/index.ts';
import { checkUpstreamUrl } from '../providers/shared/url.ts';
import type { CallContext, ProviderKey } from '../providers/types.ts';

export type RealtimeRoute = 'session' | 'calls' | 'client_secrets';

type UrlContext = Pick<CallContext, 'key' | 'network' | 'model'>;

export interface RealtimeEndpoints {
  /** Full URL of a route; `session` is the WebSocket (`wss:`/`ws:`) URL with the model in it. */
  url(route: RealtimeRoute, ctx: UrlContext): string;
  /** The auth header for this key. */
  auth(key: ProviderKey): Record<string, string>;
  /** The model as the provider names it in a session body (Azure: the deployment). */
  model(ctx: Pick<UrlContext, 'key' | 'model'>): string;
}

const PATHS: Readonly<Record<RealtimeRoute, string>> = {
  session: '/realtime',
  calls: '/realtime/calls',
  client_secrets: '/realtime/client_secrets',
};

const openai: RealtimeEndpoints = {
  url(route, ctx) {
    const root = apiRoot(ctx.network.base_url ?? OPENAI_DEFAULT_BASE_URL, '/v1');
    return withModel(route, root + PATHS[route], ctx.model);
  },
  auth: (key) => ({ authorization: `Bearer ${key.value}` }),
  model: (ctx) => ctx.model,
};

/** Azure OpenAI's GA realtime API: `/openai/v1/realtime...`, the deployment as the model, the key in `api-key`. */
const azure: RealtimeEndpoints = {
  url(route, ctx) {
    const url = `${azureEndpoint(ctx)}/openai/v1${PATHS[route]}`;
    return withModel(route, url, azureDeployment(ctx.key, ctx.model));
  },
  auth: (key) => ({ 'api-key': key.value }),
  model: (ctx) => azureDeployment(ctx.key, ctx.model),
};

const ENDPOINTS: Readonly<Record<string, RealtimeEndpoints>> = { openai, azure };

/** The realtime endpoints of a provider, or undefined when it has no realtime API. */
export function realtimeEndpoints(provider: string): RealtimeEndpoints | undefined {
  return Object.hasOwn(ENDPOINTS, provider) ? ENDPOINTS[provider] : undefined;
}

/** The session URL carries the model and speaks WebSocket; the others are plain HTTP(S) POSTs. */
function withModel(route: RealtimeRoute, url: string, model: string): string {
  checkUpstreamUrl(url);
  if (route !== 'session') return url;
  const ws = url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
  return `${ws}?model=${encodeURIComponent(model)}`;
}
