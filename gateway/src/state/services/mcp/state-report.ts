// The connection state a gateway pod sees for an MCP client, written to its row when it changes (lists and the
// operator's status read it; every pod writes its own transitions, the latest wins). Not a configuration
// change: no event is published and `updated_at` is kept.
import type { McpConnectionState } from '../../../mcp/types.ts';
import type { Queryable } from '../../db/types.ts';

/** Longest state message stored (an upstream error can be long). */
const MAX_MESSAGE = 1000;

export async function reportMcpClientState(
  q: Queryable,
  clientId: string,
  state: McpConnectionState,
  message: string | undefined,
  at: Date,
): Promise<void> {
  // A report older than the stored one (two pods, or a slow write) does not overwrite it.
  await q.query(
    `UPDATE mcp_clients SET state = $2, state_message = $3, state_at = $4
       WHERE id = $1 AND (state_at IS NULL OR state_at <= $4)`,
    [clientId, state, message === undefined ? null : message.slice(0, MAX_MESSAGE), at],
  );
}
