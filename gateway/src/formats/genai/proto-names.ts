// The Gemini API is protobuf JSON, whose parsers take a field by its lowerCamelCase JSON name or by its proto
// name (`parameters_json_schema`, `max_output_tokens`): Python's google-genai SDK sends the latter. Decoding
// renames proto names to JSON names so the translators read one spelling; values that are the caller's own data
// (function arguments and responses, JSON schemas, labels) keep their keys as they are.
import { isRecord } from '../../util/records.ts';

type Json = Record<string, unknown>;

/** Fields whose value is free-form data, not a message: never renamed inside. */
const FREE_FORM = new Set([
  'args',
  'response',
  'parameters',
  'parametersJsonSchema',
  'responseSchema',
  'responseJsonSchema',
  'labels',
]);

function jsonName(key: string): string {
  return key.includes('_') ? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : key;
}

/** `value` with every message field under its JSON name; a field sent under both names keeps the JSON one. */
export function withJsonNames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withJsonNames);
  if (!isRecord(value)) return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    const name = jsonName(key);
    if (name !== key && name in value) continue;
    out[name] = FREE_FORM.has(name) ? v : withJsonNames(v);
  }
  return out;
}
