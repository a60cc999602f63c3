// Mistral's transcription (Voxtral, `POST /v1/audio/transcriptions`): the OpenAI form without `response_format`
// (Mistral answers one JSON shape: text, language, segments, usage with `prompt_audio_seconds`), turned into the
// format the caller asked for. srt, vtt and diarized_json are not offered: refused before anything is sent.
import type { TranscriptionRequest, TranscriptionResult, TranscriptionStreamEvent } from '../../schemas/audio.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { formParts, parseAnswer, transcriptEvents, upstreamForm } from '../openai/audio.ts';
import type { OpenAIStyleEndpoints } from '../openai/endpoints.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import { send, sendForText } from '../shared/http.ts';
import type { CallContext } from '../types.ts';

export async function mistralTranscription(
  ep: OpenAIStyleEndpoints,
  req: TranscriptionRequest,
  ctx: CallContext,
): Promise<TranscriptionResult> {
  const format = req.response_format;
  if (format !== 'json' && format !== 'verbose_json' && format !== 'text') {
    throw new ProviderError(
      'invalid_request',
      `${ctx.provider} transcriptions answer json, verbose_json or text, not ${format}`,
    );
  }
  const parts = formParts(ep, req, ctx, []);
  const text = await sendForText(ctx, upstreamForm(ep, 'transcriptions', ctx, parts), parseOpenAIError);
  const json = toOpenAIShape(parseAnswer(text, 'transcriptions'), format);
  return format === 'text' ? { format, text: String(json['text']), json } : { format, json };
}

/** Mistral's answer as OpenAI's `json` (text, usage in seconds) or `verbose_json` (task, language, duration, segments). */
export function toOpenAIShape(
  m: Record<string, unknown>,
  format: 'json' | 'verbose_json' | 'text',
): Record<string, unknown> {
  const usage = isRecord(m['usage']) ? m['usage'] : {};
  const seconds = typeof usage['prompt_audio_seconds'] === 'number' ? usage['prompt_audio_seconds'] : undefined;
  if (format === 'verbose_json') {
    const segments = Array.isArray(m['segments']) ? m['segments'] : [];
    return {
      task: 'transcribe',
      language: m['language'] ?? null,
      duration: seconds ?? lastSegmentEnd(segments),
      text: m['text'],
      segments,
    };
  }
  return { text: m['text'], ...(seconds !== undefined ? { usage: { type: 'duration', seconds } } : {}) };
}

function lastSegmentEnd(segments: unknown[]): number {
  let end = 0;
  for (const s of segments) if (isRecord(s) && typeof s['end'] === 'number' && s['end'] > end) end = s['end'];
  return end;
}

/**
 * Mistral's streamed transcription as OpenAI's events: `transcription.text.delta` becomes `transcript.text.delta`,
 * `transcription.done` becomes `transcript.text.done` with the seconds as usage; language and segment events,
 * which OpenAI's stream has no counterpart for, are left out.
 */
export async function mistralTranscriptionStream(
  ep: OpenAIStyleEndpoints,
  req: TranscriptionRequest,
  ctx: CallContext,
): Promise<AsyncIterable<TranscriptionStreamEvent>> {
  if (req.response_format !== 'json' && req.response_format !== 'text') {
    throw new ProviderError('invalid_request', `${ctx.provider} streams json or text transcriptions only`);
  }
  const parts = formParts(ep, req, ctx, [{ name: 'stream', value: 'true' }]);
  const upstream = upstreamForm(ep, 'transcriptions', ctx, parts);
  const res = await send(
    ctx,
    { ...upstream, headers: { ...upstream.headers, accept: 'text/event-stream' } },
    parseOpenAIError,
  );
  return toOpenAIEvents(transcriptEvents(res.body));
}

export async function* toOpenAIEvents(
  events: AsyncIterable<TranscriptionStreamEvent>,
): AsyncGenerator<TranscriptionStreamEvent> {
  for await (const ev of events) {
    if (ev.type === 'transcription.text.delta') {
      yield { type: 'transcript.text.delta', delta: typeof ev['text'] === 'string' ? ev['text'] : '' };
    } else if (ev.type === 'transcription.done') {
      yield { type: 'transcript.text.done', ...toOpenAIShape(ev, 'json') };
    }
  }
}
