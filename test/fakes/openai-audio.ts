// Fake audio upstream in OpenAI's wire format (OpenAI, Azure deployments, Groq) and in Mistral's transcription
// shape: `/audio/speech` answers deterministic bytes in pieces (or `speech.audio.*` SSE events), and
// `/audio/transcriptions` and `/audio/translations` read the multipart form and answer each response_format
// (or `transcript.text.*` SSE events). Routes match on the path suffix.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, sendJson, sendSse, sleep } from './server.ts';

export interface AudioFakeState {
  /** Pause between the pieces of a speech answer (ms): raise it to see bytes reach the caller before the end. */
  gapMs: number;
  /** Speech answers written to their end. */
  speechCompleted: number;
  /** `openai` (OpenAI's shapes) or `mistral` (Voxtral's one JSON shape, no response_format). */
  flavor: 'openai' | 'mistral';
}

export type AudioFake = FakeServer & { audio: AudioFakeState; lastForm(): FormData };

/** Seconds of audio the fake reports for every file. */
export const FAKE_AUDIO_SECONDS = 7.25;

/** The bytes the fake speaks for an input: a header naming the format, then the input repeated. */
export function fakeSpeech(input: string, format: string): Buffer {
  return Buffer.concat([Buffer.from(`FAKE-${format.toUpperCase()}:`), Buffer.from(input.repeat(64))]);
}

/** The transcript the fake answers for a file: names its size and the model. */
export function fakeTranscript(model: string, bytes: number, translate = false): string {
  return `${translate ? 'Translated' : 'Transcribed'} ${bytes} bytes with ${model}`;
}

export function createAudioFake(opts: Partial<AudioFakeState> = {}): AudioFake {
  const audio: AudioFakeState = { gapMs: 0, speechCompleted: 0, flavor: 'openai', ...opts };
  let form: FormData | undefined;
  const server = new FakeServer([
    { method: 'POST', path: /\/audio\/speech$/, handler: (req, res) => speech(audio, req, res) },
    {
      method: 'POST',
      path: /\/audio\/(transcriptions|translations)$/,
      handler: async (req, res) => {
        form = await readForm(req);
        await transcribe(audio, req, form, res);
      },
    },
  ]);
  return Object.assign(server, {
    audio,
    lastForm: (): FormData => {
      if (!form) throw new Error('the audio fake received no form');
      return form;
    },
  });
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'application/octet-stream',
};

async function speech(state: AudioFakeState, req: RecordedRequest, res: ServerResponse): Promise<void> {
  const body = (req.json ?? {}) as Record<string, unknown>;
  if (typeof body['input'] !== 'string' || typeof body['model'] !== 'string' || body['voice'] === undefined) {
    return sendJson(res, 400, {
      error: { message: 'model, input and voice are required', type: 'invalid_request_error' },
    });
  }
  const format = typeof body['response_format'] === 'string' ? body['response_format'] : 'mp3';
  const bytes = fakeSpeech(body['input'], format);
  if (body['stream_format'] === 'sse') {
    const pieces = [bytes.subarray(0, 10), bytes.subarray(10)];
    return sendSse(
      res,
      [
        ...pieces.map((p) => ({ data: { type: 'speech.audio.delta', audio: p.toString('base64') } })),
        { data: { type: 'speech.audio.done', usage: { input_tokens: 12, output_tokens: 345, total_tokens: 357 } } },
      ],
      { gapMs: state.gapMs },
    );
  }
  // Chunked, no content-length: pieces with pauses, as a real TTS server streams.
  res.writeHead(200, { 'content-type': SPEECH_TYPES[format] ?? 'application/octet-stream' });
  const size = Math.ceil(bytes.length / 4);
  for (let i = 0; i < bytes.length; i += size) {
    res.write(bytes.subarray(i, i + size));
    if (state.gapMs) await sleep(state.gapMs);
  }
  res.end();
  state.speechCompleted += 1;
}

async function readForm(req: RecordedRequest): Promise<FormData> {
  const type = String(req.headers['content-type'] ?? '');
  return new Response(new Uint8Array(req.body), { headers: { 'content-type': type } }).formData();
}

async function transcribe(
  state: AudioFakeState,
  req: RecordedRequest,
  form: FormData,
  res: ServerResponse,
): Promise<unknown> {
  const file = form.get('file');
  const model = form.get('model');
  if (!(file instanceof Blob) || typeof model !== 'string') {
    return sendJson(res, 400, { error: { message: 'file and model are required', type: 'invalid_request_error' } });
  }
  const translate = req.path.endsWith('/translations');
  const text = fakeTranscript(model, file.size, translate);
  if (state.flavor === 'mistral') {
    if (form.has('response_format'))
      return sendJson(res, 422, { detail: 'response_format: extra field not permitted' });
    if (form.get('stream') === 'true') {
      return sendSse(res, [
        { data: { type: 'transcription.language', audio_language: 'en' } },
        ...text.split(' ').map((w, i) => ({ data: { type: 'transcription.text.delta', text: i === 0 ? w : ` ${w}` } })),
        { data: { type: 'transcription.segment', text, start: 0, end: FAKE_AUDIO_SECONDS } },
        {
          data: {
            type: 'transcription.done',
            model,
            text,
            language: 'en',
            segments: [],
            usage: {
              prompt_audio_seconds: FAKE_AUDIO_SECONDS,
              prompt_tokens: 4,
              completion_tokens: 9,
              total_tokens: 13,
            },
          },
        },
      ]);
    }
    return sendJson(res, 200, {
      model,
      text,
      language: 'en',
      segments: [{ text, start: 0, end: FAKE_AUDIO_SECONDS }],
      usage: { prompt_audio_seconds: FAKE_AUDIO_SECONDS, prompt_tokens: 4, completion_tokens: 9, total_tokens: 13 },
    });
  }
  const format = String(form.get('response_format') ?? 'json');
  const tokenBilled = model.startsWith('gpt-4o');
  if (form.get('stream') === 'true' && tokenBilled) {
    const words = text.split(' ');
    return sendSse(
      res,
      [
        ...words.map((w, i) => ({ data: { type: 'transcript.text.delta', delta: i === 0 ? w : ` ${w}` } })),
        {
          data: {
            type: 'transcript.text.done',
            text,
            usage: { type: 'tokens', input_tokens: 50, output_tokens: words.length, total_tokens: 50 + words.length },
          },
        },
      ],
      { gapMs: state.gapMs },
    );
  }
  const cue = `00:00:00,000 --> 00:00:0${FAKE_AUDIO_SECONDS.toFixed(3).replace('.', ',')}`;
  switch (format) {
    case 'text':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(`${text}\n`);
    case 'srt':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(`1\n${cue}\n${text}\n\n`);
    case 'vtt':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(`WEBVTT\n\n${cue.replaceAll(',', '.')}\n${text}\n\n`);
    case 'verbose_json':
      return sendJson(res, 200, {
        task: translate ? 'translate' : 'transcribe',
        language: 'english',
        duration: FAKE_AUDIO_SECONDS,
        text,
        segments: [{ id: 0, seek: 0, start: 0, end: FAKE_AUDIO_SECONDS, text, tokens: [1, 2], temperature: 0 }],
      });
    default:
      return sendJson(res, 200, {
        text,
        usage: tokenBilled
          ? { type: 'tokens', input_tokens: 50, output_tokens: 9, total_tokens: 59 }
          : { type: 'duration', seconds: FAKE_AUDIO_SECONDS },
      });
  }
}
