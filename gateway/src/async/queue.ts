// The work stream jobs are handed out through: one entry per job id, read by the pods' workers as one consumer
// group (each pod a consumer). The stream only carries ids; the job's row in Postgres is its truth.
import type { Coordinator } from '../state/coord/types.ts';
import type { JobStore } from '../state/services/jobs/index.ts';

export const JOB_STREAM = 'async:jobs';
export const JOB_GROUP = 'async-workers';

/** Hands a stored job to the workers. A row left unmarked is added again by the sweep (a duplicate is skipped). */
export async function enqueue(coord: Coordinator, jobs: JobStore, id: string): Promise<void> {
  await coord.streams.add(JOB_STREAM, { job: id });
  await jobs.markEnqueued(id).catch(() => undefined);
}

/** Who may read or cancel a job, from the submitting principal: never a secret, only names and ids. */
export function ownerOf(
  principal:
    | { kind: 'admin'; name: string }
    | { kind: 'token'; name: string }
    | { kind: 'basic'; username: string }
    | { kind: 'virtual_key'; vk: { id: string } }
    | { kind: 'anonymous' }
    | null,
): string {
  switch (principal?.kind) {
    case 'virtual_key':
      return `vk:${principal.vk.id}`;
    case 'admin':
      return `admin:${principal.name}`;
    case 'token':
      return `token:${principal.name}`;
    case 'basic':
      return `basic:${principal.username}`;
    default:
      return 'anonymous';
  }
}
