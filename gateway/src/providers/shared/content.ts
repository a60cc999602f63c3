// Reading unified (OpenAI-format) request content, for the providers that translate it into their own blocks
// (Anthropic Messages, Bedrock Converse).
import type { ChatMessage, ContentPart, ToolCall } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';

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

/** Appends to the previous turn when the role repeats, for providers that require alternating turns. */
export function pushMerged<R extends string, B>(turns: { role: R; content: B[] }[], role: R, blocks: B[]): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last && last.role === role) last.content.push(...blocks);
  else turns.push({ role, content: [...blocks] });
}

/** How a provider writes each piece of a conversation as its own blocks. */
export interface TurnBuilders<S, B> {
  /** System blocks for one part of a system or developer message. */
  system(part: ContentPart): S[];
  /** Blocks for one part of a user message. */
  user(part: ContentPart): B[];
  /** A text block of an assistant turn; never called with empty text. */
  assistantText(text: string, part: ContentPart): B;
  toolUse(call: ToolCall): B;
  /** The block, sent in a user turn, that carries a tool message's result. */
  toolResult(message: Extract<ChatMessage, { role: 'tool' }>): B;
}

export interface Turns<S, B> {
  system: S[] | undefined;
  messages: { role: 'user' | 'assistant'; content: B[] }[];
}

/** System/developer turns go to `system`; tool results become user turns; repeated roles are merged. */
export function toTurns<S, B>(messages: ChatMessage[], build: TurnBuilders<S, B>): Turns<S, B> {
  const system: S[] = [];
  const turns: Turns<S, B>['messages'] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const p of contentParts(m.content)) system.push(...build.system(p));
        break;
      case 'user':
        pushMerged(turns, 'user', contentParts(m.content).flatMap(build.user));
        break;
      case 'assistant': {
        const blocks: B[] = [];
        for (const p of contentParts(m.content)) {
          const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '';
          // Empty text blocks are rejected upstream, and OpenAI clients send them alongside tool calls.
          if (text !== '') blocks.push(build.assistantText(text, p));
        }
        for (const tc of m.tool_calls ?? []) blocks.push(build.toolUse(tc));
        pushMerged(turns, 'assistant', blocks);
        break;
      }
      case 'tool':
        pushMerged(turns, 'user', [build.toolResult(m)]);
        break;
    }
  }
  return { system: system.length > 0 ? system : undefined, messages: turns };
}
