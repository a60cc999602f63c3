// What audio, rerank and OCR requests are billed by: the units read from answers and estimated from requests.
import { describe, expect, it } from 'vitest';
import {
  ALLOWANCE_BYTES_PER_SECOND,
  audioSecondsAllowance,
  characterCount,
  lastCueEnd,
  speechOp,
  transcriptionOp,
  transcriptionUsage,
  usageOfJson,
} from '../../../src/engine/ops/audio.ts';
import { OCR_PAGES_ALLOWANCE, ocrOp } from '../../../src/engine/ops/ocr.ts';
import { rerankOp } from '../../../src/engine/ops/rerank.ts';
import { wavHeader } from '../../../src/providers/gemini/speech.ts';
import { AudioUpload, type SpeechRequest } from '../../../src/schemas/audio.ts';
import type { OcrRequest } from '../../../src/schemas/ocr.ts';
import type { RerankRequest } from '../../../src/schemas/rerank.ts';

describe('transcription usage', () => {
  it('reads whisper json seconds, verbose_json duration and gpt-4o-transcribe tokens', () => {
    expect(usageOfJson({ text: 'x', usage: { type: 'duration', seconds: 3 } })?.units).toEqual({ audio_seconds: 3 });
    expect(usageOfJson({ text: 'x', duration: 7.5 })?.units).toEqual({ audio_seconds: 7.5 });
    expect(usageOfJson({ text: 'x', usage: { type: 'tokens', input_tokens: 10, output_tokens: 4 } })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
    });
    expect(usageOfJson({ text: 'x' })).toBeUndefined();
  });

  it('takes srt and vtt seconds from the last cue end', () => {
    expect(lastCueEnd('1\n00:00:00,000 --> 00:00:02,500\na\n\n2\n00:00:02,500 --> 00:01:04,250\nb\n')).toBe(64.25);
    expect(lastCueEnd('WEBVTT\n\n00:01.000 --> 00:03.500\nhi\n')).toBe(3.5);
    expect(lastCueEnd('no cues')).toBeUndefined();
    expect(transcriptionUsage({ format: 'vtt', text: 'WEBVTT\n\n00:01.000 --> 01:00:00.000\nhi' })?.units).toEqual({
      audio_seconds: 3600,
    });
    // text answers carry the JSON they were taken from
    expect(transcriptionUsage({ format: 'text', text: 'x', json: { text: 'x', duration: 2 } })?.units).toEqual({
      audio_seconds: 2,
    });
  });

  it('reserves a WAV file’s duration, else one second per 4,000 bytes', () => {
    const pcm = Buffer.alloc(48_000);
    const wav = new AudioUpload('a.wav', 'audio/wav', Buffer.concat([wavHeader(pcm.length, 24_000), pcm]));
    expect(audioSecondsAllowance(wav)).toBe(1);
    const mp3 = new AudioUpload('a.mp3', 'audio/mpeg', Buffer.alloc(ALLOWANCE_BYTES_PER_SECOND * 30 + 1));
    expect(audioSecondsAllowance(mp3)).toBe(31);
    const req = { model: 'm', file: mp3, response_format: 'json' as const, stream: false, fields: [] };
    expect(transcriptionOp.estimateUnits?.(req)).toEqual({ audio_seconds: 31 });
  });

  it('keeps the audio bytes out of JSON and enumeration', () => {
    const file = new AudioUpload('a.mp3', 'audio/mpeg', Buffer.from('secret audio'));
    expect(JSON.stringify(file)).toBe('{"filename":"a.mp3","mimetype":"audio/mpeg","bytes":12}');
    expect(Object.keys(file)).not.toContain('data');
    expect(Buffer.from(file.data).toString()).toBe('secret audio');
  });
});

describe('speech, rerank and OCR units', () => {
  it('counts characters as code points', () => {
    expect(characterCount('héllo 👋')).toBe(7);
    const req = { model: 'm', input: 'héllo 👋', voice: 'alloy' } as SpeechRequest;
    expect(speechOp.estimateUnits?.(req)).toEqual({ characters: 7 });
    expect(speechOp.usage({ contentType: 'audio/mpeg', body: (async function* () {})(), characters: 7 })).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      units: { characters: 7 },
    });
  });

  it('counts a search unit per 100 documents, pages listed or the allowance', () => {
    const docs = (n: number) => ({ model: 'm', query: 'q', documents: Array(n).fill('d') }) as RerankRequest;
    expect(rerankOp.estimateUnits?.(docs(100))).toEqual({ search_units: 1 });
    expect(rerankOp.estimateUnits?.(docs(101))).toEqual({ search_units: 2 });
    const url = { type: 'document_url', document_url: 'https://x/a.pdf' } as const;
    expect(ocrOp.estimateUnits?.({ model: 'm', document: url } as OcrRequest)).toEqual({ pages: OCR_PAGES_ALLOWANCE });
    expect(ocrOp.estimateUnits?.({ model: 'm', document: url, pages: [0, 3] } as OcrRequest)).toEqual({ pages: 2 });
    expect(ocrOp.usage({ pages: [{}, {}], usage_info: { pages_processed: 5 } })?.units).toEqual({ pages: 5 });
  });
});
