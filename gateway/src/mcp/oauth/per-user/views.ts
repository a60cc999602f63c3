// The per-user flow API's shapes: the spec's flow detail (the answer of GET /api/oauth/per-user/flows/{id}), the
// list's query, and the admin's start request. The flow service builds the detail as a plain object; these schemas
// document it and validate inputs.
import { z } from 'zod';
import { nameString } from '../../../schemas/strings.ts';
import { FLOW_STATUSES, type FlowStatus } from '../../../state/services/oauth/per-user-flows.ts';

const Timestamp = z.string().describe('ISO 8601 timestamp');
const Ref = z.strictObject({ id: z.string(), name: z.string() });

export const FlowDetailView = z
  .strictObject({
    id: z.string().describe('flow id: `puf_` + 32 random characters (the consent link is its capability)'),
    flow_mode: z.enum(['user', 'vk', 'session']),
    status: z.enum(['pending', 'authorized', 'failed', 'expired']),
    status_message: z.string().optional().describe('why the flow failed or expired'),
    mcp_client: z.strictObject({ client_id: z.string(), name: z.string() }),
    oauth_config_id: z.string(),
    expires_at: Timestamp,
    created_at: Timestamp,
    has_active_token: z
      .boolean()
      .describe('the binding already holds an active token (a pending flow with this set was opened needlessly)'),
    user_id: z.string().optional().describe('user flows: the user binding, scoped to the calling credential'),
    user: Ref.optional().describe('user flows: `name` is the user id the caller sent (or the Basic username)'),
    virtual_key: Ref.optional().describe('vk flows: the key; user and session flows: the key they are scoped to'),
    session_id: z.string().optional().describe('session flows: the x-gateway-session-id the caller sent'),
  })
  .meta({ id: 'PerUserOAuthFlow' });

export const FlowList = z.strictObject({ flows: z.array(FlowDetailView), total: z.int() });

export const FlowStarted = z.strictObject({
  flow: FlowDetailView,
  consent_url: z.string().describe('where the user authorizes: `<base>/api/oauth/consent/<flow id>`'),
  created: z.boolean().describe('false when the binding already had a live pending flow (it is reused)'),
});

export const FlowListQuery = z.strictObject({
  mcp_client_id: nameString(128).optional(),
  status: z
    .enum(FLOW_STATUSES as [FlowStatus, ...FlowStatus[]])
    .optional()
    .describe('pending, authorized, failed or expired'),
  limit: z.coerce.number().int().min(1).max(1000).optional().describe('at most this many, newest first (default 100)'),
});

export const StartFlowInput = z.strictObject({
  mcp_client_id: nameString(128).describe('an MCP client with auth_type per_user_oauth'),
  virtual_key_id: nameString(128).describe(
    'vk flows: the key bound; user and session flows: the key they are scoped to',
  ),
  user_id: z.string().optional().describe('user flows: the x-gateway-user-id the key will send'),
  session_id: z.string().optional().describe('session flows: the x-gateway-session-id the key will send'),
  ttl_seconds: z.int().min(1).max(86_400).optional().describe('how long the consent link stays usable (default 900)'),
});
