// Where a provider's realtime API lives: the WebSocket URL of a session, the WebRTC calls and client-secret
// URLs, a call's sideband WebSocket and hangup URLs, and the auth header. Built from the provider's
// configuration only (network_config.base_url or the key's Azure endpoint), never from anything the caller
// sent. Providers without a realtime API have no entry.
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
  /** The WebSocket URL of a call's sideband (`/realtime?call_id=`): the call's events, seen from the server. */
  sidebandUrl(ctx: UrlContext, callId: string): string;
  /** The URL that ends a call (`POST /realtime/calls/{call_id}/hangup`). */
  hangupUrl(ctx: UrlContext, callId: string): string;
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

/** A provider's realtime API: the root its paths hang from (ending in `/v1`), its auth and model naming. */
interface RealtimeApi {
  root(ctx: UrlContext): string;
  auth(key: ProviderKey): Record<string, string>;
  model(ctx: Pick<UrlContext, 'key' | 'model'>): string;
}

function endpointsOf(api: RealtimeApi): RealtimeEndpoints {
  return {
    url(route, ctx) {
      const url = checked(api.root(ctx) + PATHS[route]);
      return route === 'session' ? `${webSocket(url)}?model=${encodeURIComponent(api.model(ctx))}` : url;
    },
    sidebandUrl: (ctx, callId) =>
      `${webSocket(checked(api.root(ctx) + PATHS.session))}?call_id=${encodeURIComponent(callId)}`,
    hangupUrl: (ctx, callId) => checked(`${api.root(ctx)}${PATHS.calls}/${encodeURIComponent(callId)}/hangup`),
    auth: api.auth,
    model: api.model,
  };
}

const openai = endpointsOf({
  root: (ctx) => apiRoot(ctx.network.base_url ?? OPENAI_DEFAULT_BASE_URL, '/v1'),
  auth: (key) => ({ authorization: `Bearer ${key.value}` }),
  model: (ctx) => ctx.model,
});

/** Azure OpenAI's GA realtime API: `/openai/v1/realtime...`, the deployment as the model, the key in `api-key`. */
const azure = endpointsOf({
  root: (ctx) => `${azureEndpoint(ctx)}/openai/v1`,
  auth: (key) => ({ 'api-key': key.value }),
  model: (ctx) => azureDeployment(ctx.key, ctx.model),
});

const ENDPOINTS: Readonly<Record<string, RealtimeEndpoints>> = { openai, azure };

/** The realtime endpoints of a provider, or undefined when it has no realtime API. */
export function realtimeEndpoints(provider: string): RealtimeEndpoints | undefined {
  return Object.hasOwn(ENDPOINTS, provider) ? ENDPOINTS[provider] : undefined;
}

function checked(url: string): string {
  checkUpstreamUrl(url);
  return url;
}

function webSocket(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
}
