// Mapping of reconcile results onto the Ready condition (pure).
import { StateError } from '@model-gateway/gateway/state';
import type { z } from 'zod';
import { Reason } from '../crds/common.ts';
import type { ReadyOutcome } from '../status.ts';
import type { ReconcileContext, Resource } from './types.ts';

export interface KindReconciler {
  kind: 'Provider' | 'ProviderKey' | 'VirtualKey' | 'MCPClient' | 'Budget';
  /** Brings the gateway state to the resource's spec. */
  apply(obj: Resource, ctx: ReconcileContext): Promise<ReadyOutcome>;
  /**
   * Removes what the resource owns before its finalizer is dropped; resolves false to be called again later
   * (e.g. a Budget waits for its VirtualKey to drop it). Kinds without rows have no finalizer.
   */
  cleanup?(obj: Resource, ctx: ReconcileContext): Promise<boolean>;
}

/** Periodic refresh of resources whose status shows live figures. */
export const USAGE_REFRESH_MS = 30_000;

export function notReady(reason: Reason, message: string, requeueAfterMs?: number): ReadyOutcome {
  return { ready: false, reason, message, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

/** A spec the API server let through but the operator cannot use (e.g. an older CRD installed). */
export function parseSpec<T>(
  schema: z.ZodType<T>,
  obj: Resource,
): { ok: true; spec: T } | { ok: false; outcome: ReadyOutcome } {
  const parsed = schema.safeParse(obj.spec ?? {});
  if (parsed.success) return { ok: true, spec: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue?.path.length ? `spec.${issue.path.join('.')}: ` : 'spec: ';
  return { ok: false, outcome: notReady(Reason.InvalidSpec, `${path}${issue?.message ?? 'invalid'}`) };
}

/**
 * State errors the user can fix by editing resources become a condition; anything else (database or Redis
 * unavailable) is rethrown so the work queue retries with backoff.
 */
export function fromStateError(err: unknown): ReadyOutcome {
  if (!(err instanceof StateError)) throw err;
  switch (err.code) {
    case 'conflict':
    case 'owned_by_kubernetes':
      return notReady(Reason.Conflict, err.message);
    case 'not_found':
      return notReady(Reason.ReferenceNotFound, err.message);
    case 'invalid':
      // A team, customer, key or MCP client the spec names that does not exist (yet): fixed by creating it.
      return /^(team_id|customer_id|provider_configs\[\d+\]\.key_ids|mcp_configs\[\d+\]\.mcp_client_name)/.test(
        err.param ?? '',
      )
        ? notReady(Reason.ReferenceNotFound, err.message)
        : notReady(Reason.InvalidSpec, err.message);
  }
}
