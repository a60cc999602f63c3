// Pure translations of the audio and rerank adapters: Mistral's transcription into OpenAI's shapes, Gemini TTS
// bodies, Bedrock's Rerank body and model ARN.
import { describe, expect, it } from 'vitest';
import { rerankBody, rerankModelArn } from '../../src/providers/bedrock/rerank.ts';
import { speechBody, wavHeader } from '../../src/providers/gemini/speech.ts';
import { toOpenAIShape } from '../../src/providers/openai-compat/transcription.ts';
import type { SpeechRequest } from '../../src/schemas/audio.ts';
import type { RerankRequest } from '../../src/schemas/rerank.ts';

describe('mistral transcription', () => {
  const answer = {
    model: 'voxtral-mini-latest',
    text: 'hello',
    language: 'en',
    segments: [{ text: 'hello', start: 0, end: 1.5 }],
    usage: { prompt_audio_seconds: 2, prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
  it('becomes OpenAI json with the seconds as usage, or verbose_json', () => {
    expect(toOpenAIShape(answer, 'json')).toEqual({ text: 'hello', usage: { type: 'duration', seconds: 2 } });
    expect(toOpenAIShape(answer, 'verbose_json')).toEqual({
      task: 'transcribe',
      language: 'en',
      duration: 2,
      text: 'hello',
      segments: answer.segments,
    });
    expect(toOpenAIShape({ ...answer, usage: {} }, 'verbose_json')['duration']).toBe(1.5);
  });
});

describe('gemini speech', () => {
  it('asks for audio with a prebuilt voice, or speaker voices', () => {
    const one = speechBody({ model: 'm', input: 'hi', voice: 'Kore' } as SpeechRequest);
    expect(one).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
      },
    });
    const two = speechBody({
      model: 'm',
      input: 'A: hi\nB: hey',
      voice: [
        { speaker: 'A', voice: 'Kore' },
        { speaker: 'B', voice: 'Puck' },
      ],
    } as SpeechRequest);
    expect(two['generationConfig']).toMatchObject({
      speechConfig: { multiSpeakerVoiceConfig: { speakerVoiceConfigs: [{ speaker: 'A' }, { speaker: 'B' }] } },
    });
    expect(() => speechBody({ model: 'm', input: 'x', voice: { id: 'v1' } } as SpeechRequest)).toThrow(/custom voice/);
  });

  it('writes a 16-bit mono WAV header', () => {
    const h = wavHeader(1000, 24_000);
    expect(h.length).toBe(44);
    expect(h.toString('latin1', 0, 4)).toBe('RIFF');
    expect(h.readUInt32LE(4)).toBe(1036);
    expect(h.readUInt32LE(28)).toBe(48_000);
    expect(h.readUInt32LE(40)).toBe(1000);
  });
});

describe('bedrock rerank', () => {
  it('names the model by ARN and sends inline text sources', () => {
    expect(rerankModelArn('amazon.rerank-v1:0', 'us-west-2')).toBe(
      'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0',
    );
    const arn = 'arn:aws:bedrock:eu-central-1::foundation-model/cohere.rerank-v3-5:0';
    expect(rerankModelArn(arn, 'us-west-2')).toBe(arn);
    const body = rerankBody(
      { model: 'm', query: 'q', documents: ['a', { text: 'b' }], top_n: 5, max_tokens_per_doc: 512 } as RerankRequest,
      arn,
    );
    expect(body).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'q' } }],
      sources: [
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'a' } } },
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'b' } } },
      ],
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 2,
          modelConfiguration: { modelArn: arn, additionalModelRequestFields: { max_tokens_per_doc: 512 } },
        },
      },
    });
  });
});
