// Whose credentials a tool call uses: the server-level token for every auth type but per_user_oauth, where the
// token belongs to the caller's user, virtual key or session (the client's flow_mode).
// Placeholder rules until per-user OAuth lands: a per-user client binds to the calling virtual key.
import type { Principal } from '../http/auth.ts';
import type { McpClientRecord, TokenBinding } from './types.ts';

export type RequestHeaders = Record<string, string | string[] | undefined>;

/** The binding of a call by `principal` (with its request `headers`) to `client`; undefined when it has none. */
export function bindingFor(
  client: McpClientRecord,
  principal: Principal | null,
  _headers: RequestHeaders,
): TokenBinding | undefined {
  if (client.auth_type !== 'per_user_oauth') return { kind: 'server' };
  if (principal?.kind === 'virtual_key') return { kind: 'vk', id: principal.vk.id, name: principal.vk.name };
  return undefined;
}
