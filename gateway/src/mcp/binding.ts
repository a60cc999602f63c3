// Whose credentials a tool call uses: the server-level token for every auth type but per_user_oauth, where the
// token belongs to the caller's user, virtual key or session (the client's flow_mode). Pure.
//
// A per-user identity must not be forgeable across tenants: the headers a caller sends (`x-gateway-user-id`,
// `x-gateway-session-id`) only name an identity *within* the credential that authenticated the request, so
// the binding id is `<scope>/<value>` where the scope is that credential (`vk:<virtual key id>`,
// `token:<gateway token name>`, `basic:<username>`, `admin`). Two virtual keys sending the same user id get two
// different tokens. A Basic user without the header is the user itself (`basic:<username>`). An anonymous caller
// has no scope, hence no per-user binding.
import type { Principal } from '../http/auth.ts';
import { stringIssue } from '../schemas/strings.ts';
import type { McpClientRecord, TokenBinding } from './types.ts';

export type RequestHeaders = Record<string, string | string[] | undefined>;

/** What of a request the binding reads: its headers, and (when given) its scheme for the consent link's origin. */
export interface BindingRequest {
  headers: RequestHeaders;
  protocol?: string | undefined;
}

export const USER_HEADER = 'x-gateway-user-id';
export const SESSION_HEADER = 'x-gateway-session-id';
/** The longest user or session id a caller may send (the session header's existing bound). */
export const MAX_IDENTITY_LENGTH = 256;

/**
 * Extra facts a per-user binding carries along (structurally still a TokenBinding, so it travels through
 * `McpCallContext.binding` to `McpCredentials.headersFor` unchanged). None of them is part of the identity:
 * `kind` + `id` are.
 */
export interface BindingExtras {
  /** The virtual key the identity is scoped to (user and session bindings of a virtual-key caller). */
  scopeVk?: { id: string; name: string } | undefined;
  /** The session id as the caller sent it (session bindings). */
  session?: string | undefined;
  /** `<scheme>://<Host>` of the calling request: the consent link's base when mcp_external_client_url is unset. */
  origin?: string | undefined;
}

export type CallerBinding = TokenBinding & BindingExtras;

export type BindingResult = { ok: true; binding: CallerBinding } | { ok: false; reason: string };

function header(h: RequestHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function isRequest(x: RequestHeaders | BindingRequest): x is BindingRequest {
  const h = (x as { headers?: unknown }).headers;
  // A header value is a string or an array of strings, never a plain object.
  return typeof h === 'object' && h !== null && !Array.isArray(h);
}

/** The credential the caller's identities are scoped to; undefined for an anonymous caller. */
export function scopeOf(principal: Principal | null): string | undefined {
  switch (principal?.kind) {
    case 'virtual_key':
      return `vk:${principal.vk.id}`;
    case 'token':
      return `token:${principal.name}`;
    case 'basic':
      return `basic:${principal.username}`;
    case 'admin':
      return 'admin';
    default:
      return undefined;
  }
}

/** `<scheme>://<Host>` of the request when its Host is a plain host[:port]; undefined otherwise. */
export function originOf(req: BindingRequest): string | undefined {
  const host = header(req.headers, 'host') ?? header(req.headers, ':authority');
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return undefined;
  const forwarded = header(req.headers, 'x-forwarded-proto');
  const scheme = req.protocol ?? (forwarded === 'https' ? 'https' : 'http');
  return `${scheme === 'https' ? 'https' : 'http'}://${host}`;
}

function identityHeader(h: RequestHeaders, name: string): { value?: string; problem?: string } {
  const raw = header(h, name);
  if (raw === undefined) return {};
  const value = raw.trim();
  if (value.length === 0 || value.length > MAX_IDENTITY_LENGTH) {
    return { problem: `${name}: 1 to ${MAX_IDENTITY_LENGTH} characters` };
  }
  const issue = stringIssue(value, 'line');
  if (issue) return { problem: `${name}: ${issue}` };
  return { value };
}

/**
 * The binding of a call by `principal` to `client`, or why there is none. `request` is the calling request
 * (headers and scheme) or just its headers.
 */
export function resolveBinding(
  client: McpClientRecord,
  principal: Principal | null,
  request: RequestHeaders | BindingRequest,
): BindingResult {
  if (client.auth_type !== 'per_user_oauth') return { ok: true, binding: { kind: 'server' } };
  const req: BindingRequest = isRequest(request) ? request : { headers: request };
  const origin = originOf(req);
  const mode = client.flow_mode ?? 'vk';
  const who = `MCP client ${client.name} uses per-user OAuth bound to each caller's`;
  if (mode === 'vk') {
    if (principal?.kind !== 'virtual_key') {
      return { ok: false, reason: `${who} virtual key: call it with a virtual key (x-gateway-vk or Bearer sk-vk-...)` };
    }
    return { ok: true, binding: { kind: 'vk', id: principal.vk.id, name: principal.vk.name, origin } };
  }
  const scope = scopeOf(principal);
  const scopeVk = principal?.kind === 'virtual_key' ? { id: principal.vk.id, name: principal.vk.name } : undefined;
  if (mode === 'user') {
    const user = identityHeader(req.headers, USER_HEADER);
    if (user.problem) return { ok: false, reason: `${who} user: ${user.problem}` };
    if (scope === undefined) {
      return { ok: false, reason: `${who} user: authenticate (a virtual key, gateway token or Basic user)` };
    }
    if (user.value === undefined) {
      if (principal?.kind === 'basic') {
        return { ok: true, binding: { kind: 'user', id: scope, name: principal.username, origin } };
      }
      return { ok: false, reason: `${who} user: send ${USER_HEADER} (or authenticate as a Basic user)` };
    }
    return { ok: true, binding: { kind: 'user', id: `${scope}/${user.value}`, name: user.value, scopeVk, origin } };
  }
  const session = identityHeader(req.headers, SESSION_HEADER);
  if (session.problem) return { ok: false, reason: `${who} session: ${session.problem}` };
  if (session.value === undefined) return { ok: false, reason: `${who} session: send ${SESSION_HEADER}` };
  if (scope === undefined) {
    return { ok: false, reason: `${who} session: authenticate (a virtual key, gateway token or Basic user)` };
  }
  return {
    ok: true,
    binding: { kind: 'session', id: `${scope}/${session.value}`, session: session.value, scopeVk, origin },
  };
}

/** The binding of a call by `principal` (with its request or request headers) to `client`; undefined when none. */
export function bindingFor(
  client: McpClientRecord,
  principal: Principal | null,
  request: RequestHeaders | BindingRequest,
): CallerBinding | undefined {
  const r = resolveBinding(client, principal, request);
  return r.ok ? r.binding : undefined;
}

/** The extras of a binding that came through `McpCallContext` (absent when a caller rebuilt the object). */
export function extrasOf(binding: TokenBinding): BindingExtras {
  return binding as CallerBinding;
}
