// The state of the live-update connection in a word (connecting, live, reconnecting), with why it is down.
import { Badge, Tooltip } from '@mantine/core';
import { type LiveState, type LiveStatus as Status, useLiveState } from '../api/live.ts';

const LOOK: Record<Status, { word: string; color: string }> = {
  off: { word: 'Offline', color: 'gray' },
  connecting: { word: 'Connecting…', color: 'yellow' },
  live: { word: 'Live', color: 'teal' },
  reconnecting: { word: 'Reconnecting…', color: 'orange' },
};

function explain(s: LiveState): string {
  if (s.status === 'live') return 'Connected: changes made elsewhere show up here without a reload';
  if (s.status === 'connecting') return 'Connecting to the gateway for live updates';
  if (s.status === 'reconnecting') {
    const inS = s.retryAt ? Math.max(0, Math.round((s.retryAt - Date.now()) / 1000)) : 0;
    const why = s.problem ? `${s.problem}; ` : '';
    return `Live updates are interrupted (${why}trying again${inS > 0 ? ` in about ${inS} s` : ''})`;
  }
  return 'Live updates are off';
}

/** `label` names what the state is of ("Live updates", "Live logs"); it is the badge's accessible name. */
export function LiveStatus({ label }: { label: string }) {
  const s = useLiveState();
  const look = LOOK[s.status];
  return (
    <Tooltip label={explain(s)} multiline maw={320}>
      <Badge variant="dot" color={look.color} role="status" aria-label={`${label}: ${s.status}`}>
        {look.word}
      </Badge>
    </Tooltip>
  );
}
