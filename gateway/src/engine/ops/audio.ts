// The audio operations: which adapter method serves each, and what each is billed by. Speech is billed by the
// characters of its input (and tokens, where a streamed answer reports them); transcription and translation by
// the seconds of audio the provider reports (and tokens for token-billed models such as gpt-4o-transcribe).
import type {
  AudioUpload,
  SpeechAudio,
  SpeechRequest,
  SpeechStreamEvent,
  TranscriptionRequest,
  TranscriptionResult,
  TranscriptionStreamEvent,
} from '../../schemas/audio.ts';
import { isRecord } from '../../util/records.ts';
import type { OperationSpec, UsageSummary } from '../operations.ts';

/** Characters as people count them (code points), which is how speech is priced. */
export function characterCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export const speechOp: OperationSpec<SpeechRequest, SpeechAudio, SpeechStreamEvent> = {
  requestType: 'speech',
  label: 'speech',
  unary: (a) => {
    const fn = a.speech;
    return fn && (async (req, ctx) => ({ ...(await fn.call(a, req, ctx)), characters: characterCount(req.input) }));
  },
  stream: (a) => {
    const fn = a.speechStream;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  usage: (res) => ({
    ...(tokenUsage(res.tokens) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
    units: { characters: res.characters ?? 0 },
  }),
  estimateUnits: (req) => ({ characters: characterCount(req.input) }),
  // The characters come from the request: the stream encoder adds them (formats/openai/audio.ts).
  chunkUsage: (ev) => (ev.type === 'speech.audio.done' ? tokenUsage(ev['usage']) : undefined),
};

export const transcriptionOp: OperationSpec<TranscriptionRequest, TranscriptionResult, TranscriptionStreamEvent> = {
  requestType: 'transcription',
  label: 'audio transcriptions',
  unary: (a) => {
    const fn = a.transcription;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  stream: (a) => {
    const fn = a.transcriptionStream;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  usage: transcriptionUsage,
  estimateUnits: (req) => ({ audio_seconds: audioSecondsAllowance(req.file) }),
  chunkUsage: (ev) => (ev.type === 'transcript.text.done' ? usageOfJson({ usage: ev['usage'] }) : undefined),
};

export const translationOp: OperationSpec<TranscriptionRequest, TranscriptionResult, never> = {
  requestType: 'translation',
  label: 'audio translations',
  unary: (a) => {
    const fn = a.translation;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  usage: transcriptionUsage,
  estimateUnits: (req) => ({ audio_seconds: audioSecondsAllowance(req.file) }),
};

/** Bytes per second assumed of a compressed file: 32 kbit/s, below what speech is usually encoded at. */
export const ALLOWANCE_BYTES_PER_SECOND = 4000;

/**
 * The seconds of audio reserved for a file before the provider says how long it was: a WAV file's own duration
 * (from its header), else one second per ALLOWANCE_BYTES_PER_SECOND bytes, so nearly every real file is covered.
 */
export function audioSecondsAllowance(file: AudioUpload): number {
  const wav = wavSeconds(file.data);
  if (wav !== undefined) return Math.max(1, Math.ceil(wav));
  return Math.max(1, Math.ceil(file.bytes / ALLOWANCE_BYTES_PER_SECOND));
}

/** `RIFF....WAVE` with a `fmt ` chunk first: the data's bytes over the byte rate (a header lie costs its sender). */
function wavSeconds(data: Uint8Array): number | undefined {
  if (data.length < 44) return undefined;
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  if (b.toString('latin1', 12, 16) !== 'fmt ') return undefined;
  const byteRate = b.readUInt32LE(28);
  return byteRate > 0 ? (data.length - 44) / byteRate : undefined;
}

/** The usage of a transcription answer: from its JSON, or from the last cue of an srt/vtt answer. */
export function transcriptionUsage(res: TranscriptionResult): UsageSummary | undefined {
  if (res.json) return usageOfJson(res.json);
  if (res.text !== undefined && (res.format === 'srt' || res.format === 'vtt')) {
    const seconds = lastCueEnd(res.text);
    if (seconds !== undefined) return secondsUsage(seconds);
  }
  return undefined;
}

/**
 * Seconds and tokens from a transcription's JSON: `duration` (verbose_json), `usage: {type: 'duration', seconds}`
 * (whisper's json), `usage: {type: 'tokens', input_tokens, output_tokens}` (gpt-4o-transcribe, which may also
 * carry seconds in a later API version).
 */
export function usageOfJson(json: Record<string, unknown>): UsageSummary | undefined {
  const usage = isRecord(json['usage']) ? json['usage'] : undefined;
  const tokens = tokenUsage(usage);
  const seconds = num(usage?.['seconds']) ?? num(json['duration']);
  if (seconds === undefined) return tokens;
  const out = tokens ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return { ...out, units: { audio_seconds: seconds } };
}

function secondsUsage(seconds: number): UsageSummary {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units: { audio_seconds: seconds } };
}

/** `{input_tokens, output_tokens, total_tokens}` (OpenAI's audio usage) as the unified usage. */
function tokenUsage(usage: unknown): UsageSummary | undefined {
  if (!isRecord(usage)) return undefined;
  const input = num(usage['input_tokens']);
  const output = num(usage['output_tokens']);
  if (input === undefined && output === undefined) return undefined;
  const prompt = input ?? 0;
  const completion = output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(usage['total_tokens']) ?? prompt + completion,
  };
}

/** `00:01:02,500 --> 00:01:04,000` (srt) or `01:04.000` (vtt): the largest end time, in seconds. */
export function lastCueEnd(text: string): number | undefined {
  let last: number | undefined;
  for (const m of text.matchAll(/-->\s*(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})/g)) {
    const [, h, min, s, frac] = m;
    const t = Number(h ?? 0) * 3600 + Number(min) * 60 + Number(s) + Number(`0.${frac}`);
    if (last === undefined || t > last) last = t;
  }
  return last;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}
