// Configuration changed somewhere (another tab, kubectl, a script with the admin key): the gateway's store_update
// messages mark the matching query caches stale, so the page on screen refetches and the others load fresh.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useLiveMessages, useLiveState } from './live.ts';
import { ALL_AREAS, staleAreas } from './live-protocol.ts';

/** Changes arriving within this long are refetched once (the operator may apply many objects at a time). */
const COALESCE_MS = 200;
/**
 * After this tab's own write settles, its page may still be leaving what it deleted (navigation renders after the
 * mutation's callbacks): changes wait this long, so nothing refetches a row this tab just deleted.
 */
const AFTER_OWN_WRITE_MS = 1000;

/** Keeps the shared socket open while mounted (the session's frame) and invalidates caches as changes arrive. */
export function useLiveCacheSync(): void {
  const qc = useQueryClient();
  const pending = useRef(new Set<string>());
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastOwnWrite = useRef(0);

  useEffect(
    () =>
      qc.getMutationCache().subscribe((event) => {
        if (event.type === 'updated' && event.mutation.state.status !== 'pending') lastOwnWrite.current = Date.now();
      }),
    [qc],
  );

  const flush = () => {
    // This tab's own write is under way or just settled: it refreshes what it changed itself, and may be leaving a
    // row it deleted (refetching that row now would answer 404). The change is applied once the write has settled
    // and the page has had time to move on.
    if (qc.isMutating() > 0 || Date.now() - lastOwnWrite.current < AFTER_OWN_WRITE_MS) {
      timer.current = setTimeout(flush, COALESCE_MS);
      return;
    }
    timer.current = undefined;
    const due = [...pending.current];
    pending.current.clear();
    for (const area of due) void qc.invalidateQueries({ queryKey: [area] });
  };

  const mark = (areas: readonly string[]) => {
    if (areas.length === 0) return;
    for (const a of areas) pending.current.add(a);
    if (timer.current === undefined) timer.current = setTimeout(flush, COALESCE_MS);
  };

  useLiveMessages((m) => {
    if (m.type === 'store_update') mark(staleAreas(m.kind));
  });

  // Changes made while the socket was down were not sent: after a reconnect, everything shown may be stale.
  const { opens } = useLiveState();
  const seen = useRef(opens);
  // biome-ignore lint/correctness/useExhaustiveDependencies: mark reads only refs and the query client
  useEffect(() => {
    if (opens > 1 && opens > seen.current) mark(ALL_AREAS);
    seen.current = opens;
  }, [opens]);

  useEffect(() => () => clearTimeout(timer.current), []);
}
