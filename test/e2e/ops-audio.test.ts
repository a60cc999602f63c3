// Audio through a real gateway with the official openai SDK: speech (bytes streamed as they arrive, formats, SSE),
// transcriptions in every response_format and streamed, translations; OpenAI, Groq and Mistral's Voxtral against
// fakes in their wire formats, Gemini TTS (PCM, as wav or pcm); bad input refused before anything is sent upstream.
import { AzureOpenAI, toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createGeminiAudioFake, fakePcm } from '../fakes/gemini-audio.ts';
import {
  type AudioFake,
  createAudioFake,
  FAKE_AUDIO_SECONDS,
  fakeSpeech,
  fakeTranscript,
} from '../fakes/openai-audio.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { logOf } from './governance-helpers.ts';
import { apiFailure, atFake, expectUnsupported, extraFields, useProviderGateway } from './providers-helpers.ts';

const AUDIO = Buffer.from('RIFF....WAVEfmt fake audio payload'.repeat(20));

let openai: AudioFake;
let groq: AudioFake;
let mistral: AudioFake;
let azure: AudioFake;
let gemini: FakeServer;
const env = useProviderGateway({
  fakes: () => [openai, groq, mistral, azure, gemini],
  start: async () => {
    gemini = await createGeminiAudioFake().start();
    azure = await createAudioFake().start();
    openai = await createAudioFake().start();
    groq = await createAudioFake().start();
    mistral = await createAudioFake({ flavor: 'mistral' }).start();
    return {
      openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: 'sk-openai-audio', models: ['*'] }),
      groq: atFake(groq.url, { id: 'gq', name: 'groq-main', value: 'gsk-groq-audio', models: ['*'] }),
      mistral: atFake(mistral.url, { id: 'mi', name: 'mistral-main', value: 'mistral-audio', models: ['*'] }),
      gemini: atFake(gemini.url, { id: 'ge', name: 'gemini-main', value: 'gemini-audio-key', models: ['*'] }),
      azure: {
        network_config: { max_retries: 0 },
        keys: [
          {
            id: 'az',
            name: 'azure-main',
            value: 'azure-audio-key',
            models: ['*'],
            aliases: { 'whisper-1': 'whisper-deploy', 'tts-1': 'tts-deploy' },
            azure_key_config: { endpoint: azure.url },
          },
        ],
      },
      anthropic: atFake(openai.url, { id: 'an', name: 'anthropic-main', value: 'sk-ant-audio', models: ['*'] }),
    };
  },
});

const wav = () => toFile(AUDIO, 'hello.wav', { type: 'audio/wav' });

function post(path: string, body: FormData | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, ...headers },
    body,
  });
}

describe('speech', () => {
  it('answers the upstream audio bytes as mp3 by default, and sends the body with the model rewritten', async () => {
    const input = 'Hello from the gateway';
    const res = await env.client.audio.speech.create({ model: 'openai/tts-1', input, voice: 'alloy' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(fakeSpeech(input, 'mp3'));
    expect(openai.last().path).toBe('/v1/audio/speech');
    expect(openai.last().headers.authorization).toBe('Bearer sk-openai-audio');
    expect(openai.last().json).toEqual({ model: 'tts-1', input, voice: 'alloy' });
    const log = await logOf(env.gw, res.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ request_type: 'speech', provider: 'openai', status: 'success' });
    // tts-1 is billed per character: 22 characters at $15 per million
    expect(log['cost_nano']).toBe(22 * 15_000);
  });

  it('labels each response_format with its media type', async () => {
    for (const [format, type] of [
      ['wav', 'audio/wav'],
      ['opus', 'audio/opus'],
      ['flac', 'audio/flac'],
      ['pcm', 'audio/pcm'],
    ] as const) {
      const res = await env.client.audio.speech.create({
        model: 'openai/gpt-4o-mini-tts',
        input: 'hi',
        voice: 'coral',
        response_format: format,
      });
      expect(res.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(fakeSpeech('hi', format));
    }
  });

  it('sends the first bytes before the upstream has finished', async () => {
    openai.audio.gapMs = 400;
    const before = openai.audio.speechCompleted;
    const res = await post(
      '/v1/audio/speech',
      JSON.stringify({ model: 'openai/tts-1', input: 'streamed', voice: 'alloy' }),
      { 'content-type': 'application/json' },
    );
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value?.length).toBeGreaterThan(0);
    expect(openai.audio.speechCompleted).toBe(before);
    const rest: Uint8Array[] = [first.value!];
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value);
    expect(Buffer.concat(rest)).toEqual(fakeSpeech('streamed', 'mp3'));
    expect(openai.audio.speechCompleted).toBe(before + 1);
    openai.audio.gapMs = 0;
  });

  it('streams speech.audio events with stream_format sse, extra_fields on the done event', async () => {
    const res = await env.client.audio.speech.create({
      model: 'openai/gpt-4o-mini-tts',
      input: 'sse please',
      voice: 'alloy',
      stream_format: 'sse',
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    const audio = Buffer.concat(
      events.filter((e) => e['type'] === 'speech.audio.delta').map((e) => Buffer.from(String(e['audio']), 'base64')),
    );
    expect(audio).toEqual(fakeSpeech('sse please', 'mp3'));
    const done = events.at(-1)!;
    expect(done).toMatchObject({ type: 'speech.audio.done', usage: { input_tokens: 12, output_tokens: 345 } });
    expect(done['extra_fields']).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini-tts' });
    expect(openai.last().json).toMatchObject({ stream_format: 'sse' });
  });

  it('serves groq speech; refuses a provider without speech and a bad body, sending nothing', async () => {
    const res = await env.client.audio.speech.create({ model: 'groq/playai-tts', input: 'x', voice: 'Fritz-PlayAI' });
    expect(Buffer.from(await res.arrayBuffer())).toEqual(fakeSpeech('x', 'mp3'));
    expect(groq.last().path).toBe('/v1/audio/speech');
    openai.reset();
    const unsupported = await apiFailure(
      env.client.audio.speech.create({ model: 'anthropic/claude-sonnet-4-5', input: 'x', voice: 'alloy' }),
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.code).toBe('unsupported_operation');
    expect(unsupported.message).toContain('anthropic');
    expect(unsupported.message).toContain('speech');
    const bad = await apiFailure(
      env.client.audio.speech.create({
        model: 'openai/tts-1',
        input: 'x',
        voice: 'alloy',
        response_format: 'ogg' as 'mp3',
      }),
    );
    expect(bad.status).toBe(400);
    const unknown = await apiFailure(env.client.audio.speech.create({ model: 'nope/tts', input: 'x', voice: 'a' }));
    expect(unknown.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });
});

describe('gemini speech', () => {
  it('serves TTS through generateContent, as wav by default and as raw pcm; refuses formats it cannot make', async () => {
    const res = await env.client.audio.speech.create({
      model: 'gemini/gemini-2.5-flash-preview-tts',
      input: 'Have a nice day',
      voice: 'Kore',
      instructions: 'Say cheerfully',
    });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wavBytes = Buffer.from(await res.arrayBuffer());
    const pcm = fakePcm('Say cheerfully: Have a nice day');
    expect(wavBytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wavBytes.readUInt32LE(24)).toBe(24_000);
    expect(wavBytes.subarray(44)).toEqual(pcm);
    // Gemini TTS is billed by its tokens: 6 in at $0.50 and 150 out at $10 per million
    const log = await logOf(env.gw, res.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ prompt_tokens: 6, completion_tokens: 150, cost_nano: 6 * 500 + 150 * 10_000 });
    const req = gemini.last();
    expect(req.path).toBe('/v1beta/models/gemini-2.5-flash-preview-tts:generateContent');
    expect(req.headers['x-goog-api-key']).toBe('gemini-audio-key');
    expect(req.json).toMatchObject({
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
      },
    });
    const raw = await env.client.audio.speech.create({
      model: 'gemini/gemini-2.5-flash-preview-tts',
      input: 'plain',
      voice: 'Puck',
      response_format: 'pcm',
    });
    expect(raw.headers.get('content-type')).toBe('audio/pcm');
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(fakePcm('plain'));
    gemini.reset();
    const mp3 = await apiFailure(
      env.client.audio.speech.create({
        model: 'gemini/gemini-2.5-flash-preview-tts',
        input: 'x',
        voice: 'Kore',
        response_format: 'mp3',
      }),
    );
    expect(mp3.status).toBe(400);
    expect(mp3.message).toContain('wav or pcm');
    expect(gemini.requests).toHaveLength(0);
  });
});

describe('transcriptions', () => {
  const model = 'openai/whisper-1';

  it('serves azure at its deployment paths with the api-key header', async () => {
    const data = await env.client.audio.transcriptions.create({ model: 'azure/whisper-1', file: await wav() });
    expect(data.text).toBe(fakeTranscript('whisper-deploy', AUDIO.length));
    expect(azure.last().url).toBe('/openai/deployments/whisper-deploy/audio/transcriptions?api-version=2024-10-21');
    expect(azure.last().headers['api-key']).toBe('azure-audio-key');
    const speech = await env.client.audio.speech.create({ model: 'azure/tts-1', input: 'hi', voice: 'alloy' });
    expect(Buffer.from(await speech.arrayBuffer())).toEqual(fakeSpeech('hi', 'mp3'));
    expect(azure.last().path).toBe('/openai/deployments/tts-deploy/audio/speech');
  });

  it('takes the AzureOpenAI client at /compat-a deployment paths (the deployment names the model)', async () => {
    const client = (deployment: string) =>
      new AzureOpenAI({
        endpoint: `${env.gw.url}/compat-a`,
        apiKey: INFERENCE_TOKEN,
        apiVersion: '2024-10-21',
        deployment,
        maxRetries: 0,
      });
    const data = await client('whisper-1').audio.transcriptions.create({ model: '', file: await wav() });
    expect(data.text).toBe(fakeTranscript('whisper-deploy', AUDIO.length));
    expect(extraFields(data)).toMatchObject({ provider: 'azure', original_model_requested: 'whisper-1' });
    const translated = await client('whisper-1').audio.translations.create({ model: '', file: await wav() });
    expect(translated.text).toBe(fakeTranscript('whisper-deploy', AUDIO.length, true));
    const speech = await client('tts-1').audio.speech.create({ model: '', input: 'hey', voice: 'alloy' });
    expect(Buffer.from(await speech.arrayBuffer())).toEqual(fakeSpeech('hey', 'mp3'));
    expect(azure.last().path).toBe('/openai/deployments/tts-deploy/audio/speech');
  });

  it('answers json with the duration usage, and sends the form with the model rewritten', async () => {
    const { data, response } = await env.client.audio.transcriptions
      .create({ model, file: await wav(), language: 'en', prompt: 'names', temperature: 0.2 })
      .withResponse();
    expect(data.text).toBe(fakeTranscript('whisper-1', AUDIO.length));
    expect(data.usage).toEqual({ type: 'duration', seconds: FAKE_AUDIO_SECONDS });
    expect(extraFields(data)).toMatchObject({ provider: 'openai', resolved_model_used: 'whisper-1' });
    expect(openai.last().path).toBe('/v1/audio/transcriptions');
    const form = openai.lastForm();
    expect(form.get('model')).toBe('whisper-1');
    expect(form.get('language')).toBe('en');
    expect(form.get('prompt')).toBe('names');
    expect(form.get('temperature')).toBe('0.2');
    expect(form.get('response_format')).toBe('json');
    const file = form.get('file') as File;
    expect(file.name).toBe('hello.wav');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(AUDIO);
    const log = await logOf(env.gw, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ request_type: 'transcription', provider: 'openai', status: 'success' });
    // whisper-1 is billed per second of audio: 7.25 s count as 8 at $0.006 per minute
    expect(log['cost_nano']).toBe(8 * 100_000);
    expect(JSON.stringify(log)).not.toContain('WAVEfmt');
  });

  it('answers text, srt and vtt as text/plain and verbose_json with segments', async () => {
    const expected = fakeTranscript('whisper-1', AUDIO.length);
    const text = await env.client.audio.transcriptions.create({ model, file: await wav(), response_format: 'text' });
    expect(text).toBe(expected);
    // text is asked for as json upstream, so its duration is known
    expect(openai.lastForm().get('response_format')).toBe('json');
    const srt = await env.client.audio.transcriptions.create({ model, file: await wav(), response_format: 'srt' });
    expect(srt).toContain('-->');
    expect(srt).toContain(expected);
    const vtt = await env.client.audio.transcriptions.create({ model, file: await wav(), response_format: 'vtt' });
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    const raw = await post('/v1/audio/transcriptions', formOf({ model, response_format: 'srt' }));
    expect(raw.headers.get('content-type')).toContain('text/plain');
    const verbose = await env.client.audio.transcriptions.create({
      model,
      file: await wav(),
      response_format: 'verbose_json',
      timestamp_granularities: ['segment', 'word'],
    });
    expect(verbose.duration).toBe(FAKE_AUDIO_SECONDS);
    expect(verbose.segments?.[0]?.text).toBe(expected);
    expect(openai.lastForm().getAll('timestamp_granularities[]')).toEqual(['segment', 'word']);
  });

  it('streams transcript.text events for a streaming model', async () => {
    const stream = await env.client.audio.transcriptions.create({
      model: 'openai/gpt-4o-transcribe',
      file: await wav(),
      stream: true,
    });
    let deltas = '';
    let done: Record<string, unknown> | undefined;
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') deltas += ev.delta;
      if (ev.type === 'transcript.text.done') done = ev as unknown as Record<string, unknown>;
    }
    const expected = fakeTranscript('gpt-4o-transcribe', AUDIO.length);
    expect(deltas).toBe(expected);
    expect(done).toMatchObject({ text: expected, usage: { type: 'tokens', input_tokens: 50 } });
    expect(done?.['extra_fields']).toMatchObject({ provider: 'openai' });
    expect(openai.lastForm().get('stream')).toBe('true');
  });

  it('translates into English', async () => {
    const data = await env.client.audio.translations.create({ model, file: await wav() });
    expect(data.text).toBe(fakeTranscript('whisper-1', AUDIO.length, true));
    expect(openai.last().path).toBe('/v1/audio/translations');
    const text = await env.client.audio.translations.create({ model, file: await wav(), response_format: 'text' });
    expect(text).toBe(fakeTranscript('whisper-1', AUDIO.length, true));
  });

  it('serves groq in OpenAI’s shape and mistral’s Voxtral in its own', async () => {
    const g = await env.client.audio.transcriptions.create({ model: 'groq/whisper-large-v3', file: await wav() });
    expect(g.text).toBe(fakeTranscript('whisper-large-v3', AUDIO.length));
    expect(groq.last().path).toBe('/v1/audio/transcriptions');
    const m = await env.client.audio.transcriptions.create({ model: 'mistral/voxtral-mini-latest', file: await wav() });
    expect(m.text).toBe(fakeTranscript('voxtral-mini-latest', AUDIO.length));
    expect(m.usage).toEqual({ type: 'duration', seconds: FAKE_AUDIO_SECONDS });
    expect(mistral.lastForm().has('response_format')).toBe(false);
    const verbose = await env.client.audio.transcriptions.create({
      model: 'mistral/voxtral-mini-latest',
      file: await wav(),
      response_format: 'verbose_json',
    });
    expect(verbose).toMatchObject({ task: 'transcribe', duration: FAKE_AUDIO_SECONDS, language: 'en' });
    const stream = await env.client.audio.transcriptions.create({
      model: 'mistral/voxtral-mini-latest',
      file: await wav(),
      stream: true,
    });
    const events: Record<string, unknown>[] = [];
    for await (const ev of stream) events.push(ev as unknown as Record<string, unknown>);
    expect(events.map((e) => e['type'])).toEqual([...Array(5).fill('transcript.text.delta'), 'transcript.text.done']);
    expect(events.map((e) => e['delta'] ?? '').join('')).toBe(fakeTranscript('voxtral-mini-latest', AUDIO.length));
    expect(events.at(-1)).toMatchObject({ usage: { type: 'duration', seconds: FAKE_AUDIO_SECONDS } });
    expect(mistral.lastForm().get('stream')).toBe('true');
    mistral.reset();
    const srt = await apiFailure(
      env.client.audio.transcriptions.create({
        model: 'mistral/voxtral-mini-latest',
        file: await wav(),
        response_format: 'srt',
      }),
    );
    expect(srt.status).toBe(400);
    expect(mistral.requests).toHaveLength(0);
  });
});

function formOf(
  fields: Record<string, string>,
  file: Blob | null = new Blob([AUDIO], { type: 'audio/wav' }),
  name = 'a.wav',
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', file, name);
  return form;
}

describe('bad input is refused and nothing is sent upstream', () => {
  it('missing file, wrong media type, empty file, bad fields, JSON body, unknown provider, unsupported provider', async () => {
    const model = 'openai/whisper-1';
    const cases: [FormData | string, number, string][] = [
      [formOf({ model }, null), 400, 'file'],
      [formOf({ model }, new Blob(['plain notes'], { type: 'text/plain' }), 'notes.txt'), 400, 'file'],
      [formOf({ model }, new Blob([], { type: 'audio/wav' })), 400, 'file'],
      [formOf({}), 400, 'model'],
      [formOf({ model, response_format: 'xml' }), 400, 'response_format'],
      [formOf({ model, temperature: 'hot' }), 400, 'temperature'],
      [formOf({ model, 'timestamp_granularities[]': 'page' }), 400, 'timestamp_granularities'],
      [formOf({ model: 'nope/whisper' }), 400, 'nope'],
    ];
    for (const [body, status, mention] of cases) {
      const res = await post('/v1/audio/transcriptions', body);
      const env_ = (await res.json()) as { error: { message: string } };
      expect(res.status, env_.error.message).toBe(status);
      expect(env_.error.message).toContain(mention);
    }
    const json = await post('/v1/audio/transcriptions', JSON.stringify({ model }), {
      'content-type': 'application/json',
    });
    expect(json.status).toBe(415);
    const translateStream = await post('/v1/audio/translations', formOf({ model, stream: 'true' }));
    expect(translateStream.status).toBe(400);
    await expectUnsupported(
      env.client.audio.transcriptions.create({ model: 'anthropic/claude-sonnet-4-5', file: await wav() }),
    );
    // a streamed transcription from a provider that does not stream it
    const groqStream = await post(
      '/v1/audio/transcriptions',
      formOf({ model: 'groq/whisper-large-v3', stream: 'true' }),
    );
    expect(groqStream.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
    expect(groq.requests).toHaveLength(0);
  });

  it('refuses a file over 25 MB with 413', async () => {
    const big = new Blob([new Uint8Array(25 * 1024 * 1024 + 1)], { type: 'audio/wav' });
    const res = await post('/v1/audio/transcriptions', formOf({ model: 'openai/whisper-1' }, big)).catch(
      (err: unknown) => err,
    );
    // The gateway answers 413 and closes the connection; the client may see the answer or the close.
    if (res instanceof Response) expect(res.status).toBe(413);
    expect(openai.requests).toHaveLength(0);
  });
});
