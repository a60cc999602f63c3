// The explorer's live feed: while `on`, rows the gateway announces over /ws are placed above the fetched list
// (live-rows.ts decides where each goes); nothing is refetched. The caller remounts on a refresh or new filters.
import { useEffect, useRef, useState } from 'react';
import { useLiveMessages, useLiveState } from '../../api/live.ts';
import type { LogFilterState } from './filters.ts';
import { addLiveRow, asLogEntry, type LiveRows, liveVerdict, NO_LIVE_ROWS, skipLiveRows } from './live-rows.ts';

export interface LiveFeed extends LiveRows {
  /** The connection dropped while on: requests logged meanwhile were not announced. */
  interrupted: boolean;
}

export function useLiveRows(on: boolean, filters: LogFilterState, cap: number): LiveFeed {
  const [rows, setRows] = useState<LiveRows>(NO_LIVE_ROWS);
  const [interrupted, setInterrupted] = useState(false);
  useLiveMessages((m) => {
    if (m.type === 'log') {
      const entry = asLogEntry(m.payload);
      if (entry) setRows((s) => addLiveRow(s, entry, liveVerdict(filters, entry), cap));
    } else if (m.type === 'logs_skipped') {
      setRows((s) => skipLiveRows(s, m.count));
    }
  }, on);

  // The socket's open count, first seen open while on; a larger one later is a reconnect.
  const { opens } = useLiveState();
  const base = useRef(0);
  useEffect(() => {
    if (!on) {
      base.current = 0;
      return;
    }
    if (base.current === 0) base.current = opens;
    else if (opens > base.current) {
      base.current = opens;
      setInterrupted(true);
    }
  }, [on, opens]);

  return { ...rows, interrupted };
}
