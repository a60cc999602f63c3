// An explorer's live feed: while `on`, rows the gateway announces over /ws are placed above the fetched list
// (live-rows.ts decides where each goes); nothing is refetched. The caller remounts on a refresh or new filters.
// The request-log explorer reads `log` messages; the MCP tool-log page reads `mcp_log` ones (useLiveFeed).
import { useEffect, useRef, useState } from 'react';
import { useLiveMessages, useLiveState } from '../../api/live.ts';
import type { LiveLogType, LiveMessage } from '../../api/live-protocol.ts';
import type { LogFilterState } from './filters.ts';
import {
  addLiveRow,
  asLogEntry,
  type LiveRows,
  type LiveVerdict,
  liveVerdict,
  skipLiveRows,
  skippedFor,
} from './live-rows.ts';
import type { LogEntry } from './types.ts';

export interface LiveFeed<R extends { id: string } = LogEntry> extends LiveRows<R> {
  /** Of `more`: messages the gateway did not send without saying which log they were of (an older gateway pod). */
  unattributed: number;
  /** The connection dropped while on: requests logged meanwhile were not announced. */
  interrupted: boolean;
}

export function useLiveRows(on: boolean, filters: LogFilterState, cap: number): LiveFeed {
  return useLiveFeed(
    on,
    cap,
    'log',
    (m) => (m.type === 'log' ? asLogEntry(m.payload) : undefined),
    (e) => liveVerdict(filters, e),
  );
}

/**
 * The rows `read` finds in the live messages, placed by `verdict`, at most `cap` of them; skipped messages are
 * counted when they are of the `own` log (or do not say). Both functions are read at each message (the latest ones
 * passed), so they may close over the page's filters.
 */
export function useLiveFeed<R extends { id: string }>(
  on: boolean,
  cap: number,
  own: LiveLogType,
  read: (m: LiveMessage) => R | undefined,
  verdict: (row: R) => LiveVerdict,
): LiveFeed<R> {
  const [rows, setRows] = useState<LiveRows<R> & { unattributed: number }>({
    rows: [],
    more: 0,
    unsure: 0,
    unattributed: 0,
  });
  const [interrupted, setInterrupted] = useState(false);
  useLiveMessages((m) => {
    if (m.type === 'logs_skipped') {
      const { count, unattributed } = skippedFor(m, own);
      if (count > 0) {
        setRows((s) => ({ ...skipLiveRows(s, count), unattributed: s.unattributed + (unattributed ? count : 0) }));
      }
      return;
    }
    const row = read(m);
    if (row) setRows((s) => ({ ...addLiveRow(s, row, verdict(row), cap), unattributed: s.unattributed }));
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
