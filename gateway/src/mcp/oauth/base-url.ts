// The gateway's public base URL for MCP OAuth (spec, server-level OAuth 8): `mcp_external_client_url` when set,
// otherwise the scheme and Host of the request that started the flow. The redirect_uri is
// `<base>/api/oauth/callback` and the per-user consent page `<base>/api/oauth/consent/<flow id>`.
import type { FastifyRequest } from 'fastify';

export const CALLBACK_PATH = '/api/oauth/callback';

export function consentPath(flowId: string): string {
  return `/api/oauth/consent/${encodeURIComponent(flowId)}`;
}

/** `mcp_external_client_url` without a trailing slash, else `<scheme>://<Host>` of the request. */
export function publicBaseUrl(
  request: Pick<FastifyRequest, 'headers' | 'protocol'>,
  external: string | undefined,
): string {
  if (external) return external.replace(/\/+$/, '');
  const host = request.headers.host ?? request.headers[':authority'];
  const value = Array.isArray(host) ? host[0] : host;
  if (!value || !/^[A-Za-z0-9.\-:[\]]+$/.test(value)) {
    throw new Error('the request has no usable Host header: set client.mcp_external_client_url');
  }
  return `${request.protocol}://${value}`;
}

export function redirectUri(base: string): string {
  return `${base}${CALLBACK_PATH}`;
}
