// A quick check for the everyday chat body: plain-text messages and scalar parameters. It accepts only bodies
// that the ChatRequest schema accepts unchanged (a test compares the two on thousands of bodies), so such a body
// is used as parsed from JSON without zod's walk over the schema, which was the largest single step between a
// request's arrival and its upstream call (docs/benchmarks.md). Anything else - content parts, tools, tool
// calls, response formats, and every invalid body - goes through the schema, which also words the errors.
import { isRecord } from '../util/records.ts';
import type { ChatRequest } from './chat.ts';

const isString = (v: unknown): boolean => typeof v === 'string';
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const orNull =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean =>
    v === null || check(v);
const isFiniteNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isInteger = (v: unknown): boolean => Number.isSafeInteger(v);
const isPositiveInteger = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
const within =
  (min: number, max: number) =>
  (v: unknown): boolean =>
    isFiniteNumber(v) && (v as number) >= min && (v as number) <= max;
const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every(isString);

/** Fields with nested shapes (tools, formats) are always left to the schema. */
const needsSchema = (): boolean => false;

/**
 * What a top-level field must be for the quick path; every field the schema names is listed. A field the schema
 * does not name is passed on as it is, as the schema does.
 */
const FIELDS: Record<string, (v: unknown) => boolean> = {
  model: (v) => typeof v === 'string' && v.length > 0,
  messages: (v) => Array.isArray(v) && v.length > 0 && v.every(isPlainMessage),
  stream: isBoolean,
  stream_options: (v) =>
    v === null || (isRecord(v) && (v['include_usage'] === undefined || isBoolean(v['include_usage']))),
  max_tokens: orNull(isPositiveInteger),
  max_completion_tokens: orNull(isPositiveInteger),
  temperature: orNull(within(0, 2)),
  top_p: orNull(within(0, 1)),
  n: orNull(isPositiveInteger),
  stop: orNull((v) => isString(v) || isStringArray(v)),
  presence_penalty: orNull(isFiniteNumber),
  frequency_penalty: orNull(isFiniteNumber),
  seed: orNull(isInteger),
  user: isString,
  tools: needsSchema,
  tool_choice: needsSchema,
  parallel_tool_calls: isBoolean,
  response_format: needsSchema,
  reasoning_effort: orNull(isString),
  fallbacks: (v) => Array.isArray(v) && v.every((f) => typeof f === 'string' && f.length > 0),
};

/** Roles whose message is `{role, content: string, name?: string}` plus fields the schema does not name. */
const PLAIN_ROLES = new Set(['system', 'developer', 'user', 'assistant']);
/** Assistant fields the schema checks; a message carrying any of them goes through the schema. */
const ASSISTANT_EXTRAS = ['tool_calls', 'refusal', 'reasoning_content'];

function isPlainMessage(m: unknown): boolean {
  if (!isRecord(m)) return false;
  const role = m['role'];
  if (typeof m['content'] !== 'string') return false;
  if (m['name'] !== undefined && typeof m['name'] !== 'string') return false;
  if (role === 'tool') return typeof m['tool_call_id'] === 'string';
  if (typeof role !== 'string' || !PLAIN_ROLES.has(role)) return false;
  return role !== 'assistant' || ASSISTANT_EXTRAS.every((k) => m[k] === undefined);
}

/** True when `body` is a chat request the schema would accept unchanged; false means "ask the schema". */
export function isPlainChatRequest(body: unknown): body is ChatRequest {
  if (!isRecord(body) || !('model' in body) || !('messages' in body)) return false;
  for (const key in body) {
    const check = Object.hasOwn(FIELDS, key) ? FIELDS[key] : undefined;
    if (check && !check(body[key])) return false;
  }
  return true;
}
