// Provider-neutral helpers for unified (OpenAI-format) content and upstream streams. The bedrock provider
// uses them too; they belong in providers/shared/ (owned by the lead) and live here until moved.
import type { ChatMessage, ContentPart } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { toNetworkError } from '../shared/http.ts';

export interface DataUrl {
  mediaType: string;
  /** Base64 payload. */
  data: string;
}

/** Parses a `data:` URL; non-base64 payloads are re-encoded so callers always get base64. */
export function parseDataUrl(url: string): DataUrl | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma === -1) return null;
  const meta = url.slice(5, comma).split(';');
  const mediaType = meta[0] || 'text/plain';
  const payload = url.slice(comma + 1);
  if (meta.includes('base64')) return { mediaType, data: payload };
  return { mediaType, data: Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
}

export function isHttpUrl(url: string): boolean {
  return url.startsWith('https://') || url.startsWith('http://');
}

type Content = Extract<ChatMessage, { role: 'user' }>['content'];

export function contentParts(content: Content | null | undefined): ContentPart[] {
  if (content == null) return [];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** Tool-call arguments as an object; an empty string means "no arguments" (some clients send that). */
export function parseToolArguments(args: string, toolName: string): unknown {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch (err) {
    throw new ProviderError('invalid_request', `tool call '${toolName}' has arguments that are not valid JSON`, {
      cause: err,
    });
  }
}

/** OpenAI `stop` is a string or a list; providers take a list. */
export function stopList(stop: string | string[] | null | undefined): string[] | undefined {
  if (stop == null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  return list.length > 0 ? list : undefined;
}

/** Appends to the previous turn when the role repeats, since both providers require alternating turns. */
export function pushMerged<R extends string, B>(turns: { role: R; content: B[] }[], role: R, blocks: B[]): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last && last.role === role) last.content.push(...blocks);
  else turns.push({ role, content: [...blocks] });
}

/** An error while reading a streamed body: timeouts and resets become ProviderErrors like errors before it. */
export function streamReadError(err: unknown): ProviderError {
  return toNetworkError(err, isTimeout(err));
}

function isTimeout(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'TimeoutError') return true;
  return err.cause instanceof Error && err.cause.name === 'TimeoutError';
}

/** Closes the upstream body when the consumer stops early, so the connection is not left half-read. */
export function releaseBody(body: { destroy(): unknown; readableEnded?: boolean }): void {
  if (!body.readableEnded) body.destroy();
}
