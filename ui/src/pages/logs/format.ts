// How the logs pages write numbers: USD with enough digits for sub-cent requests, milliseconds, token counts.

export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toPrecision(3)}`;
  return `$${usd.toFixed(usd < 100 ? 4 : 2)}`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

export function formatTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

/** A bucket's start on a chart axis: time of day for short buckets, the date for day-sized ones. */
export function bucketLabel(iso: string, bucketSeconds: number): string {
  const d = new Date(iso);
  if (bucketSeconds >= 86_400) return d.toLocaleDateString();
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** The words of a logged error (the gateway envelope's `error`, or a string), never its JSON. */
export function errorWords(error: unknown): string | undefined {
  if (error === null || error === undefined) return undefined;
  if (typeof error === 'string') return error;
  if (typeof error === 'object') {
    const e = error as { message?: unknown; error?: { message?: unknown }; type?: unknown }; // read-only probe
    if (typeof e.message === 'string') return e.message;
    if (e.error && typeof e.error.message === 'string') return e.error.message;
    if (typeof e.type === 'string') return e.type;
  }
  return 'The request failed (no message recorded)';
}
