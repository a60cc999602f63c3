// Request-log rows as they are written: the row, its COPY text line, and the one function that stores lines.
// The read side (/api/logs, retention) is logs.ts.
import { DbError, isDataException } from '../db/errors.ts';
import type { Db } from '../db/types.ts';

export interface RequestLog {
  /** A UUIDv7 (the request id): the primary key orders the log by time. */
  id: string;
  /** Unix milliseconds. */
  created_at: number;
  request_type: string;
  provider: string | null;
  original_model_requested: string | null;
  resolved_model_used: string | null;
  status: 'success' | 'error';
  status_code: number;
  stream: boolean;
  latency_ms: number;
  selected_key_id: string;
  selected_key_name: string;
  attempt_trail: unknown[];
  fallback_index: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  error: unknown;
  virtual_key_id: string | null;
  team_id: string | null;
  customer_id: string | null;
  cost_nano: number | null;
  routing_rule_id: string | null;
  /** The request and response bodies as JSON text (`{"request": ..., "response": ...}`); null: metadata only. */
  content: string | null;
  /** The semantic cache's debug record of this request; null while no cache ran. */
  cache_debug: unknown;
  /** Header values captured for the log (logging_headers, x-gateway-lh-*); null when none. */
  metadata: Record<string, string> | null;
}

/** The COPY's column list; `copyLine` writes the fields in this order (a mismatch fails every COPY in the tests). */
export const LOG_COLUMNS = [
  'id',
  'created_at',
  'request_type',
  'provider',
  'original_model_requested',
  'resolved_model_used',
  'status',
  'status_code',
  'stream',
  'latency_ms',
  'selected_key_id',
  'selected_key_name',
  'attempt_trail',
  'fallback_index',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'error',
  'virtual_key_id',
  'team_id',
  'customer_id',
  'cost_nano',
  'routing_rule_id',
  'content',
  'cache_debug',
  'metadata',
] as const;

/** A table rows are COPYed into: its name and the COPY statement naming its columns in line order. */
export interface CopyTable {
  table: string;
  copySql: string;
  /** Fields a line has. */
  columns: number;
}

export function copyTable(table: string, columns: readonly string[]): CopyTable {
  return { table, copySql: `COPY ${table} (${columns.join(', ')}) FROM STDIN`, columns: columns.length };
}

const REQUEST_LOGS = copyTable('request_logs', LOG_COLUMNS);

/**
 * One row in COPY text format: tab-separated, `\\N` for NULL, backslash escapes, ending in a newline. The
 * fields are written in LOG_COLUMNS order by one template: one string per row, built on every request.
 */
export function copyLine(e: RequestLog): string {
  return `${copyEscape(e.id)}\t${isoMillis(e.created_at)}\t${copyEscape(e.request_type)}\t${text(e.provider)}\t${text(
    e.original_model_requested,
  )}\t${text(e.resolved_model_used)}\t${e.status}\t${e.status_code}\t${e.stream ? 't' : 'f'}\t${e.latency_ms}\t${copyEscape(
    e.selected_key_id,
  )}\t${copyEscape(e.selected_key_name)}\t${json(e.attempt_trail)}\t${e.fallback_index}\t${int(e.prompt_tokens)}\t${int(
    e.completion_tokens,
  )}\t${int(e.total_tokens)}\t${json(e.error)}\t${text(e.virtual_key_id)}\t${text(e.team_id)}\t${text(
    e.customer_id,
  )}\t${int(e.cost_nano)}\t${text(e.routing_rule_id)}\t${text(e.content)}\t${json(e.cache_debug)}\t${json(e.metadata)}\n`;
}

/** COPY text fields: a text, an integer, a value as JSON; `\\N` for null. */
export const text = (s: string | null): string => (s === null ? '\\N' : copyEscape(s));
export const int = (n: number | null): string => (n === null ? '\\N' : String(n));
export const json = (v: unknown): string => (v === null || v === undefined ? '\\N' : copyEscape(JSON.stringify(v)));

let isoSecond = Number.NaN;
let isoPrefix = '';
/** ISO 8601 in UTC with milliseconds; the part up to the second is formatted once per second, not per row. */
export function isoMillis(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4); // drop "000Z"
  }
  const milli = whole - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** COPY text format of several rows. */
export function copyText(entries: readonly RequestLog[]): string {
  let out = '';
  for (const e of entries) out += copyLine(e);
  return out;
}

// NUL cannot be stored in a Postgres text column at all: it becomes U+FFFD rather than failing the batch.
export function copyEscape(s: string): string {
  return /[\\\n\r\t\0]/.test(s) ? s.replace(/[\\\n\r\t\0]/g, (c) => COPY_ESCAPES[c] ?? c) : s;
}

const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\uFFFD',
};
const COPY_UNESCAPES: Record<string, string> = { '\\': '\\', n: '\n', r: '\r', t: '\t' };

function copyUnescape(s: string): string {
  return s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => COPY_UNESCAPES[c] ?? c) : s;
}

/**
 * Writes rows given as COPY text lines (`copyLine`), all or nothing: COPY is the cheapest ingestion
 * Postgres has (PGlite too, from a blob). A retry first drops the rows already stored, so a batch whose
 * commit was acknowledged too late is never duplicated.
 */
export async function writeLogLines(
  db: Db,
  data: Uint8Array,
  opts: { retry?: boolean } = {},
  target: CopyTable = REQUEST_LOGS,
): Promise<number> {
  const rows = opts.retry ? await withoutStored(db, data, target) : data;
  return rows.length > 0 ? copyIsolating(db, rows, target) : 0;
}

/**
 * COPYs the lines; when Postgres refuses a row's data (SQLSTATE class 22 or 23: a value out of range, a
 * broken encoding, a duplicate), the batch is split in halves until the refused rows stand alone, and only
 * they are dropped. One bad row must not stop every later row from being stored. Returns the rows dropped.
 */
async function copyIsolating(db: Db, data: Uint8Array, target: CopyTable): Promise<number> {
  try {
    await db.copyFrom(target.copySql, data);
    return 0;
  } catch (error) {
    if (!isRowDataError(error)) throw error;
  }
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const firstEnd = buf.indexOf(0x0a);
  if (firstEnd === -1 || firstEnd === buf.length - 1) return 1;
  // Split at the newline nearest the middle, so each half holds whole rows.
  let cut = buf.indexOf(0x0a, buf.length >> 1);
  if (cut === -1 || cut === buf.length - 1) cut = buf.lastIndexOf(0x0a, buf.length - 2);
  return (
    (await copyIsolating(db, buf.subarray(0, cut + 1), target)) +
    (await copyIsolating(db, buf.subarray(cut + 1), target))
  );
}

function isRowDataError(error: unknown): boolean {
  return isDataException(error) || (error instanceof DbError && error.sqlState?.startsWith('23') === true);
}

async function withoutStored(db: Db, data: Uint8Array, target: CopyTable): Promise<Uint8Array> {
  const lines = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8').split('\n');
  lines.pop(); // after the last newline
  const ids = lines.map((line) => copyUnescape(line.slice(0, line.indexOf('\t'))));
  if (ids.length === 0) return data.subarray(0, 0);
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${target.table} WHERE id = ANY($1::text[])`, [ids]);
  const short = lines.some((line) => fieldsOf(line) < target.columns);
  if (rows.length === 0 && !short) return data;
  const stored = new Set(rows.map((r) => r.id));
  let out = '';
  lines.forEach((line, i) => {
    if (!stored.has(ids[i]!)) out += `${withTrailingNulls(line, target.columns)}\n`;
  });
  return Buffer.from(out);
}

/** Fields of a COPY text line: tabs inside values are escaped, so every tab separates two fields. */
function fieldsOf(line: string): number {
  let n = 1;
  for (let i = line.indexOf('\t'); i !== -1; i = line.indexOf('\t', i + 1)) n++;
  return n;
}

/**
 * A line written by an older release (spooled on disk before an upgrade) lacks the columns added since, which are
 * always appended last and nullable: they are written as NULL rather than the row being refused.
 */
function withTrailingNulls(line: string, columns: number): string {
  const missing = columns - fieldsOf(line);
  return missing > 0 ? line + '\t\\N'.repeat(missing) : line;
}
