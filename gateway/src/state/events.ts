// Change events: every write publishes what changed; every pod reloads just that part of its snapshot.
import { z } from 'zod';

export const CHANGES_CHANNEL = 'changes';

export const ChangeEvent = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('provider'), name: z.string() }),
  z.object({ kind: z.literal('client_config') }),
  z.object({ kind: z.literal('admin_keys') }),
  // Virtual keys, teams, customers, budgets, pricing overrides, routing rules: reloaded together, or, when the
  // event names the virtual keys that changed (and nothing else did), just those keys.
  z.object({ kind: z.literal('governance'), virtual_key_ids: z.array(z.string()).min(1).max(1000).optional() }),
  // MCP clients (their rows, OAuth configuration status): reloaded together; pods reconcile connections.
  z.object({ kind: z.literal('mcp') }),
  // Plugin settings (/api/plugins, config.json plugins[]): the small table is reloaded whole.
  z.object({ kind: z.literal('plugins') }),
]);
export type ChangeEvent = z.infer<typeof ChangeEvent>;

export function parseChangeEvent(message: string): ChangeEvent | undefined {
  try {
    const r = ChangeEvent.safeParse(JSON.parse(message));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
