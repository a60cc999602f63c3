// The OpenAI-format audio operations: speech (JSON in; audio bytes out as they arrive, or `speech.audio.*` SSE
// events), transcriptions and translations (multipart/form-data in; JSON, or text/plain for text, srt and vtt, or
// `transcript.text.*` SSE events).
import { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import type { OperationSpec, UsageSummary } from '../../engine/operations.ts';
import { characterCount, speechOp, transcriptionOp, translationOp } from '../../engine/ops/audio.ts';
import { GatewayError } from '../../http/errors.ts';
import { Form, type FormFile, type FormLimits } from '../../http/multipart.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import { BinaryBody } from '../../providers/shared/binary.ts';
import {
  AudioUpload,
  type SpeechAudio,
  SpeechRequest,
  type SpeechStreamEvent,
  TRANSCRIPTION_FORMATS,
  type TranscriptionFormat,
  type TranscriptionRequest,
  type TranscriptionResult,
  type TranscriptionStreamEvent,
} from '../../schemas/audio.ts';
import type { Decoded, FormatOperation, RequestParts, StreamCodec, WireFormat } from '../types.ts';

const MB = 1024 * 1024;

/** OpenAI's own bound on an uploaded audio file; one file per request. */
export const AUDIO_FORM_LIMITS: FormLimits = { maxFileBytes: 25 * MB, maxFiles: 1, maxFields: 64 };

/** Containers the transcription APIs read (OpenAI's list, plus Opus and AAC which Groq and Mistral take). */
const AUDIO_EXTENSIONS = new Set([
  'flac',
  'mp3',
  'mp4',
  'mpeg',
  'mpga',
  'm4a',
  'ogg',
  'oga',
  'opus',
  'wav',
  'webm',
  'aac',
]);
const AUDIO_VIDEO_TYPES = new Set(['video/mp4', 'video/mpeg', 'video/webm', 'video/ogg', 'application/ogg']);

const INFERENCE_ERRORS = [400, 402, 403, 404, 413, 429, 502, 503, 504];

function invalid(message: string, param: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

// --- speech

function speechCodec(
  spec: OperationSpec<SpeechRequest, unknown, SpeechStreamEvent>,
): StreamCodec<SpeechRequest, SpeechStreamEvent> {
  return {
    contentType: SSE_CONTENT_TYPE,
    open(body) {
      const characters = characterCount(body.input);
      return {
        // The characters spoken are known from the request; the done event adds the tokens it reports.
        usage: (ev): UsageSummary | undefined => {
          if (ev.type !== 'speech.audio.done') return undefined;
          const tokens = spec.chunkUsage?.(ev) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
          return { ...tokens, units: { characters } };
        },
        chunk: (ev, extra) =>
          sseFrame(JSON.stringify(ev.type === 'speech.audio.done' ? { ...ev, extra_fields: extra() } : ev), ev.type),
        end: () => undefined,
        error: (env) => sseFrame(JSON.stringify(env), 'error'),
      };
    },
  };
}

function speechOperation(format: WireFormat): FormatOperation<SpeechRequest, SpeechAudio, SpeechStreamEvent> {
  return {
    format,
    spec: speechOp,
    doc: speechDoc,
    decode(parts: RequestParts): Decoded<SpeechRequest> {
      const r = SpeechRequest.safeParse(parts.body);
      if (!r.success) {
        const param = issueParam(r.error);
        throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
      }
      const body = r.data;
      return { body, model: body.model, fallbacks: body.fallbacks, stream: body.stream_format === 'sse' };
    },
    respond(res) {
      const headers: Record<string, string> = {};
      if (res.contentLength !== undefined) headers['content-length'] = res.contentLength;
      return new BinaryBody(res.contentType, res.body, headers);
    },
    stream: speechCodec(speechOp),
  };
}

const speechDoc: RouteDoc = {
  operationId: 'createSpeech',
  summary: 'Create speech from text',
  tags: ['Audio'],
  description:
    'model is `<provider>/<model>`. The audio bytes are sent as they arrive (`audio/mpeg` for mp3, `audio/opus`, ' +
    '`audio/aac`, `audio/flac`, `audio/wav`, `audio/pcm`); with `stream_format: "sse"`, `speech.audio.delta` and ' +
    '`speech.audio.done` events where the provider streams them. Billed by the characters of `input`.',
  body: SpeechRequest,
  bodyExamples: [{ model: 'openai/gpt-4o-mini-tts', input: 'Hello there', voice: 'alloy' }],
  responses: {
    200: {
      description: 'The audio (binary, the media type of `response_format`), or server-sent events',
      text: ['audio/mpeg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm', 'text/event-stream'],
    },
  },
  errors: INFERENCE_ERRORS,
};

// --- transcriptions and translations

/** The form as /openapi.json describes it (documentation only: the decoder reads the form itself). */
const TranscriptionForm = z.object({
  file: z.string().describe('The audio file (flac, mp3, mp4, mpeg, mpga, m4a, ogg, opus, wav, webm; at most 25 MB)'),
  model: z.string().min(1).describe('`<provider>/<model>`'),
  language: z.string().optional(),
  prompt: z.string().optional(),
  response_format: z
    .enum(TRANSCRIPTION_FORMATS)
    .optional()
    .describe('Default `json`; text, srt and vtt are text/plain'),
  temperature: z.number().min(0).max(1).optional(),
  'timestamp_granularities[]': z.array(z.enum(['word', 'segment'])).optional(),
  stream: z
    .boolean()
    .optional()
    .describe('Transcriptions only: `transcript.text.delta` / `transcript.text.done` events'),
  fallbacks: z.array(z.string()).optional(),
});

function isAudio(file: FormFile): boolean {
  const type = file.mimetype.toLowerCase().split(';')[0]!.trim();
  if (type.startsWith('audio/') || AUDIO_VIDEO_TYPES.has(type)) return true;
  if (type !== '' && type !== 'application/octet-stream') return false;
  const dot = file.filename.lastIndexOf('.');
  return dot >= 0 && AUDIO_EXTENSIONS.has(file.filename.slice(dot + 1).toLowerCase());
}

function decodeForm(parts: RequestParts, what: 'transcriptions' | 'translations'): Decoded<TranscriptionRequest> {
  const form = parts.body;
  if (!(form instanceof Form)) {
    throw new GatewayError(
      'unsupported_media_type',
      `audio ${what} take a multipart/form-data body with the audio in \`file\``,
    );
  }
  const model = form.field('model');
  if (!model) throw invalid('model: required (`<provider>/<model>`)', 'model');
  const files = form.filesNamed('file');
  const file = files[0];
  if (!file) throw invalid('file: required (the audio file to read)', 'file');
  if (file.data.length === 0) throw invalid('file: the audio file is empty', 'file');
  if (!isAudio(file)) {
    throw invalid(
      `file: ${file.mimetype || 'this media type'} is not audio (send flac, mp3, mp4, mpeg, mpga, m4a, ogg, opus, wav or webm)`,
      'file',
    );
  }
  const format = (form.field('response_format') ?? 'json') as TranscriptionFormat;
  if (!TRANSCRIPTION_FORMATS.includes(format)) {
    throw invalid(`response_format: must be one of ${TRANSCRIPTION_FORMATS.join(', ')}`, 'response_format');
  }
  const streamField = form.field('stream');
  if (streamField !== undefined && streamField !== 'true' && streamField !== 'false') {
    throw invalid('stream: must be true or false', 'stream');
  }
  const stream = streamField === 'true';
  if (stream && what === 'translations') throw invalid('stream: audio translations do not stream', 'stream');
  const temperature = form.field('temperature');
  if (temperature !== undefined) {
    const t = Number(temperature);
    if (temperature.trim() === '' || !Number.isFinite(t) || t < 0 || t > 1) {
      throw invalid('temperature: must be a number from 0 to 1', 'temperature');
    }
  }
  for (const g of form.fields.get('timestamp_granularities[]') ?? []) {
    if (g !== 'word' && g !== 'segment') {
      throw invalid('timestamp_granularities[]: each must be word or segment', 'timestamp_granularities');
    }
  }
  const fallbacks = [...(form.fields.get('fallbacks') ?? []), ...(form.fields.get('fallbacks[]') ?? [])];
  const fields: [string, string][] = [];
  for (const [name, values] of form.fields) for (const v of values) fields.push([name, v]);
  const body: TranscriptionRequest = {
    model,
    file: new AudioUpload(file.filename, file.mimetype, file.data),
    response_format: format,
    stream,
    fields,
    ...(fallbacks.length > 0 ? { fallbacks } : {}),
  };
  return { body, model, fallbacks: body.fallbacks, stream };
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** text, srt and vtt as text/plain; the JSON formats with the gateway's `extra_fields`. */
function respondTranscription(res: TranscriptionResult, extra: object): unknown {
  if (res.text !== undefined) return new BinaryBody('text/plain; charset=utf-8', once(Buffer.from(res.text)));
  return Object.assign(res.json ?? {}, { extra_fields: extra });
}

const transcriptCodec: StreamCodec<TranscriptionRequest, TranscriptionStreamEvent> = {
  contentType: SSE_CONTENT_TYPE,
  open() {
    return {
      usage: (ev) => transcriptionOp.chunkUsage?.(ev),
      chunk: (ev, extra) =>
        sseFrame(JSON.stringify(ev.type === 'transcript.text.done' ? { ...ev, extra_fields: extra() } : ev), ev.type),
      end: () => undefined,
      error: (env) => sseFrame(JSON.stringify(env), 'error'),
    };
  },
};

function formDoc(what: 'transcriptions' | 'translations'): RouteDoc {
  const transcribe = what === 'transcriptions';
  return {
    operationId: transcribe ? 'createTranscription' : 'createTranslation',
    summary: transcribe ? 'Transcribe audio' : 'Translate audio into English text',
    tags: ['Audio'],
    description:
      'multipart/form-data; model is `<provider>/<model>`. `json`, `verbose_json` and `diarized_json` answer JSON, ' +
      '`text`, `srt` and `vtt` answer text/plain. Billed by the seconds of audio the provider reports (and tokens ' +
      'for token-billed models).',
    body: transcribe ? TranscriptionForm : TranscriptionForm.omit({ stream: true }),
    bodyType: 'multipart/form-data',
    responses: {
      200: {
        description: transcribe
          ? 'The transcription (JSON or text/plain), or server-sent events with `stream: true`'
          : 'The English text (JSON or text/plain)',
        json: z.looseObject({ text: z.string() }),
        text: transcribe ? ['text/plain', 'text/event-stream'] : 'text/plain',
      },
    },
    errors: INFERENCE_ERRORS,
  };
}

export interface AudioOperations {
  speech: FormatOperation<SpeechRequest, SpeechAudio, SpeechStreamEvent>;
  transcriptions: FormatOperation<TranscriptionRequest, TranscriptionResult, TranscriptionStreamEvent>;
  translations: FormatOperation<TranscriptionRequest, TranscriptionResult, never>;
}

export function audioOperations(format: WireFormat): AudioOperations {
  return {
    speech: speechOperation(format),
    transcriptions: {
      format,
      spec: transcriptionOp,
      doc: formDoc('transcriptions'),
      multipart: AUDIO_FORM_LIMITS,
      decode: (parts) => decodeForm(parts, 'transcriptions'),
      respond: respondTranscription,
      stream: transcriptCodec,
    },
    translations: {
      format,
      spec: translationOp,
      doc: formDoc('translations'),
      multipart: AUDIO_FORM_LIMITS,
      decode: (parts) => decodeForm(parts, 'translations'),
      respond: respondTranscription,
    },
  };
}
