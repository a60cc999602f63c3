// Audio operations in the unified (OpenAI) shape: speech (text in, audio bytes or SSE events out), transcription
// and translation (an uploaded audio file in, text or JSON out, or transcript SSE events).
import { z } from 'zod';
import { Upload } from './upload.ts';

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** The media type of each speech format as the caller receives it. */
export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

const VoiceConfig = z.looseObject({ speaker: z.string().min(1), voice: z.string().min(1) });

export const SpeechRequest = z.looseObject({
  model: z.string().min(1).describe('`<provider>/<model>`'),
  input: z.string().min(1).describe('The text to speak'),
  voice: z
    .union([z.string().min(1), z.looseObject({ id: z.string().min(1) }), z.array(VoiceConfig).min(1)])
    .describe('A voice name, a custom voice `{id}`, or speaker/voice pairs (multi-speaker models)'),
  instructions: z.string().optional(),
  response_format: z.enum(SPEECH_FORMATS).optional().describe('Default `mp3`'),
  speed: z.number().min(0.25).max(4).optional(),
  stream_format: z
    .enum(['sse', 'audio'])
    .optional()
    .describe('`sse`: `speech.audio.delta` / `speech.audio.done` events instead of the audio bytes'),
  fallbacks: z.array(z.string()).optional(),
});
export type SpeechRequest = z.infer<typeof SpeechRequest>;

/** Speech audio as the upstream sends it, passed on as it arrives. */
export interface SpeechAudio {
  contentType: string;
  body: AsyncIterable<Uint8Array>;
  /** The upstream's `content-length`, when it sent one. */
  contentLength?: string | undefined;
  /** Characters of input spoken (set by the operation from the request: the billed unit). */
  characters?: number;
  /** Tokens, where the provider answered whole and reported them (Gemini TTS): then billed by these. */
  tokens?: { input_tokens: number; output_tokens: number };
}

/** One SSE event of a streamed speech answer: `speech.audio.delta` (`audio`: base64) or `speech.audio.done`. */
export type SpeechStreamEvent = Record<string, unknown> & { type: string };

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** Formats answered as `text/plain` rather than JSON. */
export const TEXT_TRANSCRIPTION_FORMATS: ReadonlySet<TranscriptionFormat> = new Set(['text', 'srt', 'vtt']);

/** An uploaded audio file (schemas/upload.ts). */
export { Upload as AudioUpload };

/** A transcription or translation request, decoded from its form. */
export interface TranscriptionRequest {
  model: string;
  file: Upload;
  response_format: TranscriptionFormat;
  stream: boolean;
  fallbacks?: string[] | undefined;
  /** The other text fields as the caller sent them, in order (`language`, `prompt`, `temperature`, `include[]`, ...). */
  fields: [string, string][];
}

/** What a transcription answered, in the format the caller asked for. */
export interface TranscriptionResult {
  format: TranscriptionFormat;
  /** The JSON answer (json, verbose_json, diarized_json), or the JSON a `text` answer was taken from (its usage). */
  json?: Record<string, unknown> | undefined;
  /** The text answer (text, srt, vtt). */
  text?: string | undefined;
}

/** One SSE event of a streamed transcription: `transcript.text.delta`, `transcript.text.done`, `transcript.text.segment`. */
export type TranscriptionStreamEvent = Record<string, unknown> & { type: string };
