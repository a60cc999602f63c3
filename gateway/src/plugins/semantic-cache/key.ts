// What identifies a cached answer (pure): the request normalised (keys sorted, routing-only fields dropped, the
// system prompt too when the settings say so), its scope, the deterministic cache_id (UUIDv5, RFC 9562), the
// prompt text the semantic layer embeds, and the conversation's length.
import { createHash } from 'node:crypto';

/** Namespace UUID of the gateway's cache ids (fixed: the same request always gets the same id). */
export const CACHE_ID_NAMESPACE = '3c1e9b0a-7f3d-4f5e-9a51-2b8d6c4e1f07';

/** RFC 9562 §5.5: SHA-1 of the namespace's 16 bytes and the name, version 5, variant 10. */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  if (ns.length !== 16) throw new Error('uuidV5: the namespace is not a UUID');
  const b = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Body fields that say how to route, not what to answer: the scope carries the model when it matters. */
const ROUTING_FIELDS = new Set(['model', 'fallbacks']);
/** Where formats keep the system prompt outside the conversation (Anthropic, Responses, Gemini, Bedrock). */
const SYSTEM_FIELDS = new Set(['system', 'instructions', 'systemInstruction', 'system_instruction']);
const SYSTEM_ROLES = new Set(['system', 'developer']);
/** Where formats keep the conversation. */
const CONVERSATION_FIELDS = ['messages', 'contents', 'input', 'prompt'] as const;
/** Fields whose strings are prompt text (any depth). */
const TEXT_FIELDS = new Set([
  'messages',
  'contents',
  'parts',
  'content',
  'text',
  'input',
  'prompt',
  'query',
  'system',
  'instructions',
  'systemInstruction',
  'system_instruction',
]);
/** The embedded text is cut here (embedding models take a few thousand tokens). */
export const MAX_PROMPT_CHARS = 32_768;

/** The request as the cache compares it; undefined when the body is no JSON object. */
export function normalise(body: unknown, excludeSystemPrompt: boolean): Record<string, unknown> | undefined {
  if (!isRecord(body)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || ROUTING_FIELDS.has(k)) continue;
    if (excludeSystemPrompt && SYSTEM_FIELDS.has(k)) continue;
    out[k] = excludeSystemPrompt && Array.isArray(v) && isConversation(k) ? v.filter((m) => !isSystemTurn(m)) : v;
  }
  return out;
}

/** Turns in the conversation (messages, contents, a Responses input list); 1 for a single prompt. */
export function conversationLength(normalised: Record<string, unknown>): number {
  for (const k of CONVERSATION_FIELDS) {
    const v = normalised[k];
    if (Array.isArray(v) && (k === 'messages' || k === 'contents' || v.some(isRecord))) return v.length;
    if (v !== undefined) return 1;
  }
  return 1;
}

/** Sorted-key JSON: equal requests, equal text, whatever the key order. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : stableJson(x))).join(',')}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export interface ScopeParts {
  format: string;
  requestType: string;
  stream: boolean;
  /** `<provider>/<model>` as the request names it (after the format's default provider). */
  model: string;
  byProvider: boolean;
  byModel: boolean;
}

/** The scope an entry is stored and looked up under. */
export function scopeOf(p: ScopeParts): string {
  const slash = p.model.indexOf('/');
  const provider = slash > 0 ? p.model.slice(0, slash) : '';
  const model = slash > 0 ? p.model.slice(slash + 1) : p.model;
  const parts = [p.format, p.requestType, p.stream ? 'stream' : 'unary'];
  if (p.byProvider) parts.push(`provider=${provider}`);
  if (p.byModel) parts.push(`model=${model}`);
  return parts.join('|');
}

/** The cache_id: a UUIDv5 of the scoped, normalised request (two tenants' equal requests get two ids). */
export function cacheIdOf(
  where: { namespace: string; tenant: string; cacheKey: string; scope: string },
  normalised: Record<string, unknown>,
): string {
  return uuidV5(
    stableJson([where.namespace, where.tenant, where.cacheKey, where.scope, normalised]),
    CACHE_ID_NAMESPACE,
  );
}

/** The prompt's text for the embedding: every string under a text field, in order, cut at MAX_PROMPT_CHARS. */
export function promptText(normalised: Record<string, unknown>): string {
  const out: string[] = [];
  let size = 0;
  const visit = (v: unknown, depth: number): void => {
    if (size >= MAX_PROMPT_CHARS || depth > 16) return;
    if (typeof v === 'string') {
      if (v !== '') {
        out.push(v);
        size += v.length + 1;
      }
    } else if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
    } else if (isRecord(v)) {
      for (const [k, x] of Object.entries(v)) if (TEXT_FIELDS.has(k)) visit(x, depth + 1);
    }
  };
  for (const [k, v] of Object.entries(normalised)) if (TEXT_FIELDS.has(k)) visit(v, 0);
  return out.join('\n').slice(0, MAX_PROMPT_CHARS);
}

function isConversation(k: string): boolean {
  return k === 'messages' || k === 'contents' || k === 'input';
}

function isSystemTurn(m: unknown): boolean {
  return isRecord(m) && typeof m['role'] === 'string' && SYSTEM_ROLES.has(m['role']);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
