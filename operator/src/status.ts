// Status of a resource (pure): the Ready condition with a reason, observedGeneration and per-kind fields.
// A new status is only written when it differs from the current one, so re-applying the same manifests and
// the periodic resync cause no writes.
import { type Condition, Reason } from './crds/common.ts';

export type ReadyOutcome =
  | { ready: true; fields?: Record<string, unknown>; requeueAfterMs?: number }
  | { ready: false; reason: Reason; message: string; fields?: Record<string, unknown>; requeueAfterMs?: number };

export interface ResourceStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

/** The status to write for `outcome`; `lastTransitionTime` moves only when the condition's status flips. */
export function nextStatus(
  current: ResourceStatus | undefined,
  generation: number | undefined,
  outcome: ReadyOutcome,
  now: Date,
): ResourceStatus {
  const previous = readyOf(current);
  const status = outcome.ready ? 'True' : 'False';
  const reason = outcome.ready ? Reason.Ready : outcome.reason;
  const message = outcome.ready ? 'synced to the gateway' : outcome.message;
  const ready: Condition = {
    type: 'Ready',
    status,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime:
      previous && previous.status === status ? previous.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z'),
    reason,
    message: message.slice(0, 4096),
  };
  const others = (current?.conditions ?? []).filter((c) => c.type !== 'Ready');
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: [...others, ready],
    ...(outcome.fields ?? {}),
  };
}

/**
 * The merge patch that turns `current` into `next`: a merge patch keeps every field it does not name, so a field
 * `next` drops (an MCPClient's authorizeUrl once authorized) is sent as null, which removes it.
 */
export function statusPatch(current: ResourceStatus | undefined, next: ResourceStatus): ResourceStatus {
  const dropped = Object.keys(current ?? {}).filter((k) => next[k] === undefined);
  return { ...Object.fromEntries(dropped.map((k) => [k, null])), ...next };
}

/** True when writing `next` would change nothing a reader can see. */
export function sameStatus(current: ResourceStatus | undefined, next: ResourceStatus): boolean {
  return canonical(current ?? {}) === canonical(next);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** Ready=True for the generation the resource has now. */
export function isReady(obj: { metadata: { generation?: number }; status?: ResourceStatus }): boolean {
  const ready = readyOf(obj.status);
  return ready?.status === 'True' && obj.status?.observedGeneration === obj.metadata.generation;
}

/** The Ready condition of a status, when there is one. */
export function readyOf(status: ResourceStatus | undefined): Condition | undefined {
  return status?.conditions?.find((c) => c.type === 'Ready');
}
