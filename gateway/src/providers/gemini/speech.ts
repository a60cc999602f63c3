// Speech on Gemini TTS models (Gemini API and Vertex AI): `generateContent` with `responseModalities: ["AUDIO"]`,
// which answers 16-bit mono PCM (`audio/L16;codec=pcm;rate=24000`) in one JSON body. The gateway serves `pcm` as
// it came and `wav` with a 44-byte header in front; other formats would need an encoder and are refused before
// anything is sent. An absent `response_format` means `wav` here (OpenAI's default, mp3, cannot be made).
import { SPEECH_CONTENT_TYPES, type SpeechAudio, type SpeechRequest } from '../../schemas/audio.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';
import { sendGoogleJson } from './errors.ts';

export interface SpeechEndpoint {
  model(ctx: CallContext): string;
  url(ctx: CallContext, model: string): string;
  auth(ctx: CallContext): Promise<Record<string, string>>;
}

const DEFAULT_SAMPLE_RATE = 24_000;

/** The generateContent body for a TTS model: one voice, or speaker/voice pairs (multi-speaker models). */
export function speechBody(req: SpeechRequest): Record<string, unknown> {
  const voice = req.voice;
  let speechConfig: Record<string, unknown>;
  if (typeof voice === 'string') {
    speechConfig = { voiceConfig: { prebuiltVoiceConfig: { voiceName: voice } } };
  } else if (Array.isArray(voice)) {
    speechConfig = {
      multiSpeakerVoiceConfig: {
        speakerVoiceConfigs: voice.map((v) => ({
          speaker: v.speaker,
          voiceConfig: { prebuiltVoiceConfig: { voiceName: v.voice } },
        })),
      },
    };
  } else {
    throw new ProviderError('invalid_request', 'gemini speech takes a prebuilt voice name, not a custom voice id');
  }
  // Gemini TTS is steered by the prompt itself ("Say cheerfully: ...").
  const text = req.instructions ? `${req.instructions}: ${req.input}` : req.input;
  return {
    contents: [{ role: 'user', parts: [{ text }] }],
    generationConfig: { responseModalities: ['AUDIO'], speechConfig },
  };
}

export function googleSpeech(ep: SpeechEndpoint) {
  return async (req: SpeechRequest, ctx: CallContext): Promise<SpeechAudio> => {
    const format = req.response_format ?? 'wav';
    if (format !== 'wav' && format !== 'pcm') {
      throw new ProviderError(
        'invalid_request',
        `${ctx.provider} speech answers PCM audio: response_format must be wav or pcm, not ${format}`,
      );
    }
    if (req.speed !== undefined && req.speed !== 1) {
      throw new ProviderError(
        'invalid_request',
        `${ctx.provider} speech has no speed setting (steer it in instructions)`,
      );
    }
    const model = ep.model(ctx);
    const res = await sendGoogleJson<unknown>(ctx, {
      url: ep.url(ctx, model),
      headers: { ...(await ep.auth(ctx)), 'content-type': 'application/json' },
      body: JSON.stringify(speechBody(req)),
    });
    const { pcm, rate } = audioOf(res);
    const bytes = format === 'wav' ? Buffer.concat([wavHeader(pcm.length, rate), pcm]) : pcm;
    const usage = isRecord(res) && isRecord(res['usageMetadata']) ? res['usageMetadata'] : undefined;
    const input = usage?.['promptTokenCount'];
    const output = usage?.['candidatesTokenCount'];
    return {
      contentType: SPEECH_CONTENT_TYPES[format],
      body: once(bytes),
      contentLength: String(bytes.length),
      ...(typeof input === 'number' && typeof output === 'number'
        ? { tokens: { input_tokens: input, output_tokens: output } }
        : {}),
    };
  };
}

/** The first inline audio part of the answer, and its sample rate (`rate=` in its media type). */
function audioOf(res: unknown): { pcm: Buffer; rate: number } {
  const candidates = isRecord(res) && Array.isArray(res['candidates']) ? res['candidates'] : [];
  for (const c of candidates) {
    const parts = isRecord(c) && isRecord(c['content']) ? c['content']['parts'] : undefined;
    if (!Array.isArray(parts)) continue;
    for (const p of parts) {
      const inline = isRecord(p) ? (p['inlineData'] ?? p['inline_data']) : undefined;
      if (!isRecord(inline) || typeof inline['data'] !== 'string') continue;
      const mime = String(inline['mimeType'] ?? inline['mime_type'] ?? '');
      const rate = Number(/rate=(\d+)/.exec(mime)?.[1] ?? DEFAULT_SAMPLE_RATE);
      return { pcm: Buffer.from(inline['data'], 'base64'), rate: rate > 0 ? rate : DEFAULT_SAMPLE_RATE };
    }
  }
  throw new ProviderError('bad_response', 'gemini speech answer has no audio');
}

/** A canonical 44-byte WAV header for 16-bit mono PCM. */
export function wavHeader(dataBytes: number, sampleRate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'latin1');
  h.write('fmt ', 12, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
