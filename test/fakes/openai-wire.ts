// What the fake OpenAI upstream's routes share (openai.ts: chat, completions, embeddings, models;
// openai-responses.ts: Responses): ids, token counts, reading a request's body, OpenAI's 400, SSE writing.
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendJson, sleep } from './server.ts';

export interface OpenAIFakeStreamState {
  /** Pause between stream events (ms); raise it to prove the gateway yields before the stream ends. */
  gapMs: number;
  /** Streams written to the end, `[DONE]` included. */
  completed: number;
}

export type Json = Record<string, unknown>;

/** The assistant text the fake answers with. */
export function fakeReply(model: string, lastUser: string): string {
  return `Echo from ${model}: ${lastUser}`;
}

let counter = 0;
export const nextId = (prefix: string): string => `${prefix}${(++counter).toString(36).padStart(8, '0')}`;
export const now = (): number => Math.floor(Date.now() / 1000);
export const tokens = (text: string): number => text.split(/\s+/).filter(Boolean).length;
export const words = (text: string): string[] => text.match(/\s*\S+/g) ?? [''];

export function obj(v: unknown): Json | undefined {
  // a non-null, non-array object: its properties are read as unknown and checked where used
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

/** The objects of a JSON array (anything else: none). */
export function objects(v: unknown): Json[] {
  return Array.isArray(v) ? v.map((x: unknown) => obj(x) ?? {}) : [];
}

export const body = (req: RecordedRequest): Json => obj(req.json) ?? {};

/** The model a request names: the body's, else the Azure deployment in the path. */
export function modelOf(req: RecordedRequest, b: Json): string {
  if (typeof b['model'] === 'string') return b['model'];
  return /\/deployments\/([^/]+)\//.exec(req.path)?.[1] ?? 'unknown-model';
}

/** OpenAI's 400 shape; returns true when it answered. */
export function invalid(res: ServerResponse, ok: boolean, message: string, param: string | null): boolean {
  if (ok) return false;
  sendJson(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
  return true;
}

export function checkStreamOptions(res: ServerResponse, b: Json): boolean {
  return invalid(
    res,
    b['stream_options'] === undefined || b['stream_options'] === null || b['stream'] === true,
    'The stream_options parameter is only allowed when stream is enabled.',
    'stream_options',
  );
}

export function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  return objects(content)
    .map((p) => (typeof p['text'] === 'string' ? p['text'] : ''))
    .filter(Boolean)
    .join(' ');
}

export function chatUsage(prompt: number, completion: number): Json {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

export async function writeSse(
  res: ServerResponse,
  state: OpenAIFakeStreamState,
  events: { event?: string; data: unknown }[],
  done = true,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const e of events) {
    if (res.destroyed) return;
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
    if (state.gapMs > 0) await sleep(state.gapMs);
  }
  if (res.destroyed) return;
  // chat and completions streams end with the [DONE] sentinel; Responses streams just end
  res.end(done ? 'data: [DONE]\n\n' : undefined);
  state.completed++;
}
