// The admin's side of per-user OAuth: starting a flow on behalf of a caller. Pure: the request and the snapshot's
// clients and virtual keys in, the binding the caller's own tool calls will use out (the same rule, so the token
// the user grants is the one those calls find), or the field that is wrong.
import type { VirtualKey } from '../../../governance/model.ts';
import { StateError } from '../../../state/errors.ts';
import { invalidInput } from '../../../state/services/input.ts';
import { type CallerBinding, resolveBinding, SESSION_HEADER, USER_HEADER } from '../../binding.ts';
import type { McpClientRecord } from '../../types.ts';
import { StartFlowInput } from './views.ts';

export interface AdminStart {
  client: McpClientRecord;
  binding: CallerBinding;
  ttlMs: number | undefined;
}

/** Validates the admin's start request against the current clients and keys. Throws a StateError `invalid`. */
export function adminStart(
  body: unknown,
  clients: ReadonlyMap<string, McpClientRecord>,
  keys: ReadonlyMap<string, VirtualKey>,
): AdminStart {
  const parsed = StartFlowInput.safeParse(body);
  if (!parsed.success) throw invalidInput(parsed.error);
  const input = parsed.data;
  const client = clients.get(input.mcp_client_id);
  if (!client) {
    throw new StateError('invalid', `mcp_client_id: no MCP client ${input.mcp_client_id}`, 'mcp_client_id');
  }
  if (client.auth_type !== 'per_user_oauth') {
    throw new StateError(
      'invalid',
      `mcp_client_id: MCP client ${client.name} does not use per-user OAuth (auth_type ${client.auth_type})`,
      'mcp_client_id',
    );
  }
  const vk = keys.get(input.virtual_key_id);
  if (!vk) throw new StateError('invalid', `virtual_key_id: no virtual key ${input.virtual_key_id}`, 'virtual_key_id');
  const mode = client.flow_mode ?? 'vk';
  const extra = (field: 'user_id' | 'session_id', wanted: boolean) => {
    if (!wanted && input[field] !== undefined) {
      throw new StateError('invalid', `${field}: MCP client ${client.name} binds tokens per ${mode}`, field);
    }
    if (wanted && input[field] === undefined) {
      throw new StateError('invalid', `${field}: required, MCP client ${client.name} binds tokens per ${mode}`, field);
    }
  };
  extra('user_id', mode === 'user');
  extra('session_id', mode === 'session');
  const headers: Record<string, string> = {};
  if (input.user_id !== undefined) headers[USER_HEADER] = input.user_id;
  if (input.session_id !== undefined) headers[SESSION_HEADER] = input.session_id;
  const r = resolveBinding(client, { kind: 'virtual_key', vk }, headers);
  if (!r.ok) {
    const param = mode === 'user' ? 'user_id' : mode === 'session' ? 'session_id' : 'virtual_key_id';
    throw new StateError('invalid', `${param}: ${r.reason}`, param);
  }
  return { client, binding: r.binding, ttlMs: input.ttl_seconds !== undefined ? input.ttl_seconds * 1000 : undefined };
}
