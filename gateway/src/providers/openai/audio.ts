// Audio on OpenAI-style routes (OpenAI, Azure deployments, Groq, Mistral, ...): speech passes the audio bytes on
// as they arrive (or OpenAI's `speech.audio.*` SSE events), transcriptions and translations send the caller's
// form on with the model rewritten. A `text` transcription is asked for as `json` and answered with its text,
// so its duration (usage) is known and billed; srt and vtt pass through as text.
import {
  SPEECH_CONTENT_TYPES,
  type SpeechAudio,
  type SpeechRequest,
  type SpeechStreamEvent,
  type TranscriptionRequest,
  type TranscriptionResult,
  type TranscriptionStreamEvent,
} from '../../schemas/audio.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { encodeForm, type FormPart } from '../shared/form-body.ts';
import { bodyReadError, send, sendForText } from '../shared/http.ts';
import { type BoundedBody, SseDecoder } from '../shared/sse.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import type { OpenAIRoute, OpenAIStyleEndpoints } from './endpoints.ts';
import { parseOpenAIError } from './errors.ts';
import { jsonAnswer } from './request.ts';
import { openStream, payload } from './stream.ts';

/** Fields the gateway sets itself on the upstream form (or that are its own). */
const GATEWAY_FIELDS = new Set(['model', 'fallbacks', 'fallbacks[]', 'stream', 'response_format', 'file']);

export async function speech(ep: OpenAIStyleEndpoints, req: SpeechRequest, ctx: CallContext): Promise<SpeechAudio> {
  // `stream_format` goes upstream only as the caller sent it (servers without it may refuse the field).
  const body = upstreamBody(req, ep.bodyModel(ctx), 'once');
  const res = await send(ctx, { url: ep.url('speech', ctx), headers: ep.headers(ctx.key), body }, parseOpenAIError);
  const format = req.response_format ?? 'mp3';
  const audio = binaryAnswer(res, ctx.network.max_response_bytes, SPEECH_CONTENT_TYPES[format]);
  // The caller asked for a format: its media type is what it receives, whatever the upstream labelled it.
  return {
    contentType: SPEECH_CONTENT_TYPES[format],
    body: audio.body,
    contentLength: audio.headers['content-length'],
  };
}

export function speechStream(
  ep: OpenAIStyleEndpoints,
  req: SpeechRequest,
  ctx: CallContext,
): Promise<AsyncIterable<SpeechStreamEvent>> {
  const body = upstreamBody({ ...req, stream_format: 'sse' }, ep.bodyModel(ctx), 'once');
  return openStream<SpeechStreamEvent>(ep, 'speech', ctx, body);
}

/** The caller's form for the upstream: the model rewritten, the gateway's own fields left out, the file last. */
export function formParts(ep: OpenAIStyleEndpoints, req: TranscriptionRequest, ctx: CallContext, extra: FormPart[]) {
  const parts: FormPart[] = [{ name: 'model', value: ep.bodyModel(ctx) }, ...extra];
  for (const [name, value] of req.fields) if (!GATEWAY_FIELDS.has(name)) parts.push({ name, value });
  parts.push({
    name: 'file',
    file: { filename: req.file.filename, mimetype: req.file.mimetype, data: req.file.data },
  });
  return parts;
}

export function upstreamForm(ep: OpenAIStyleEndpoints, route: OpenAIRoute, ctx: CallContext, parts: FormPart[]) {
  const form = encodeForm(parts);
  // The endpoints' headers carry a JSON content type: the form's own replaces it.
  const headers = { ...ep.headers(ctx.key), 'content-type': form.contentType };
  return { url: ep.url(route, ctx), headers, body: form.body };
}

/** Transcription or translation, answered whole in the caller's format. */
export async function transcribe(
  ep: OpenAIStyleEndpoints,
  route: 'transcriptions' | 'translations',
  req: TranscriptionRequest,
  ctx: CallContext,
): Promise<TranscriptionResult> {
  const format = req.response_format;
  const upstreamFormat = format === 'text' ? 'json' : format;
  const parts = formParts(ep, req, ctx, [{ name: 'response_format', value: upstreamFormat }]);
  const text = await sendForText(ctx, upstreamForm(ep, route, ctx, parts), parseOpenAIError);
  if (format === 'srt' || format === 'vtt') return { format, text };
  const json = parseAnswer(text, route);
  if (format === 'text') {
    const t = json['text'];
    if (typeof t !== 'string') throw new ProviderError('bad_response', `upstream ${route} answer has no text`);
    return { format, text: t, json };
  }
  return { format, json };
}

export function parseAnswer(text: string, route: OpenAIRoute): Record<string, unknown> {
  return jsonAnswer<Record<string, unknown>>(text, route, (v) => typeof v['text'] === 'string');
}

/** OpenAI's streamed transcription: `transcript.text.delta` events, then `transcript.text.done` with usage. */
export async function transcriptionStream(
  ep: OpenAIStyleEndpoints,
  req: TranscriptionRequest,
  ctx: CallContext,
): Promise<AsyncIterable<TranscriptionStreamEvent>> {
  const extra: FormPart[] = [{ name: 'stream', value: 'true' }];
  if (req.fields.some(([n]) => n === 'response_format') || req.response_format !== 'json') {
    extra.push({ name: 'response_format', value: req.response_format });
  }
  const upstream = upstreamForm(ep, 'transcriptions', ctx, formParts(ep, req, ctx, extra));
  const res = await send(
    ctx,
    { ...upstream, headers: { ...upstream.headers, accept: 'text/event-stream' } },
    parseOpenAIError,
  );
  const type = res.headers['content-type'];
  if (typeof type === 'string' && !type.includes('text/event-stream')) {
    // A model that cannot stream (whisper-1) answers the whole transcription: offered as its one `done` event.
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw bodyReadError(err);
    }
    const json = parseAnswer(text, 'transcriptions');
    return oneDoneEvent(json);
  }
  return transcriptEvents(res.body);
}

async function* oneDoneEvent(json: Record<string, unknown>): AsyncGenerator<TranscriptionStreamEvent> {
  yield { ...json, type: 'transcript.text.done' };
}

/** The typed JSON events of a transcription stream, as they arrive. */
export async function* transcriptEvents(body: BoundedBody): AsyncGenerator<TranscriptionStreamEvent> {
  const decoder = new SseDecoder(body.maxBytes);
  try {
    for await (const chunk of body) for (const ev of decoder.push(chunk)) yield* event(ev.data);
    for (const ev of decoder.finish()) yield* event(ev.data);
  } catch (err) {
    throw err instanceof ProviderError ? err : bodyReadError(err);
  }
}

function* event(data: string): Generator<TranscriptionStreamEvent> {
  if (data === '[DONE]') return;
  const parsed = payload<unknown>(data);
  if (!isRecord(parsed) || typeof parsed['type'] !== 'string') {
    throw new ProviderError('bad_response', 'upstream sent a transcription event without a type');
  }
  // A JSON object with a string `type` (checked above): the event passes on as sent.
  yield parsed as TranscriptionStreamEvent;
}
