// Which watch events need the object itself reconciled, as controller-runtime's GenerationChangedPredicate: an
// update that leaves metadata.generation, the finalizers and the deletion mark as they were (the operator's own
// status write, above all) does not. Without it every status write came back as one more reconcile of the same
// object (a bulk apply of 1,000 VirtualKeys ran ~3.8 reconciles per key). The periodic resync still reconciles
// everything, so a status edited by hand is rewritten within a resync period.
import type { WatchEventType } from './informer.ts';

/** The metadata this looks at (listed objects carry Dates, watched ones strings: only presence counts). */
export interface Watched {
  metadata?: { uid?: string; generation?: number; deletionTimestamp?: unknown; finalizers?: string[] };
}

/** What of an object decides whether it needs reconciling. */
function markOf(obj: Watched): string {
  const m = obj.metadata;
  return JSON.stringify([m?.uid, m?.generation, m?.deletionTimestamp != null, m?.finalizers ?? []]);
}

export class ChangeFilter {
  private readonly marks = new Map<string, string>();

  /** Records the event and says whether the object `key` needs a reconcile for it. */
  admit(key: string, type: WatchEventType, obj: Watched): boolean {
    if (type === 'delete') {
      this.marks.delete(key);
      return true;
    }
    const mark = markOf(obj);
    const before = this.marks.get(key);
    this.marks.set(key, mark);
    return type === 'add' || before !== mark;
  }
}
