// Async inference in the embedded default (PGlite and the in-process coordinator): the same submit, stream and
// worker code runs jobs to completion (chat; speech, whose audio is stored in base64; a multipart transcription),
// and jobs accepted before a restart are run by the next process (the in-process stream died with the old one).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { type AudioFake, createAudioFake, fakeSpeech, fakeTranscript } from '../fakes/openai-audio.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';

interface Job {
  id: string;
  status: string;
  status_code?: number;
  result?: unknown;
}

let chatFake: OpenAIFake;
let audioFake: AudioFake;
let dataDir: TempDir;
let gw: TestGateway | undefined;

function config() {
  const key = (id: string, url: string) => ({
    network_config: { base_url: url, max_retries: 0 },
    keys: [{ id, name: id, value: `sk-${id}-0123456789`, models: ['*'] }],
  });
  return { providers: { openai: key('oa', chatFake.url), groq: key('gq', audioFake.url) } };
}

function start(env: Record<string, string> = {}): Promise<TestGateway> {
  return startTestGateway({
    backend: 'embedded',
    config: config(),
    env: { GATEWAY_DATA_DIR: dataDir.path, GATEWAY_ASYNC_POLL_MS: '20', ...env },
  });
}

beforeAll(async () => {
  chatFake = await createOpenAIFake().start();
  audioFake = await createAudioFake().start();
  dataDir = await tempDir('gw-async-embedded-');
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await chatFake?.stop();
  await audioFake?.stop();
  await dataDir?.remove();
});

async function poll(c: OpenAI, path: string): Promise<Job> {
  const t0 = Date.now();
  for (;;) {
    const job = await c.get<Job>(path);
    if (job.status !== 'queued' && job.status !== 'processing') return job;
    if (Date.now() - t0 > 15_000) throw new Error(`job still ${job.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('embedded default', () => {
  it('runs chat, speech and a multipart transcription job to completion', async () => {
    gw = await start();
    expect(gw.rt.state.coord.kind).toBe('memory');
    const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });

    const chat = await c.post<Job>('/async/chat/completions', {
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'embedded job' }] },
    });
    const chatDone = await poll(c, `/async/chat/completions/${chat.id}`);
    expect(chatDone.status).toBe('completed');
    expect(chatDone.result).toMatchObject({
      choices: [{ message: { content: 'Echo from gpt-4o-mini: embedded job' } }],
      extra_fields: { provider: 'openai' },
    });

    const speech = await c.post<Job>('/async/audio/speech', {
      body: { model: 'groq/playai-tts', input: 'say it later', voice: 'Fritz-PlayAI', response_format: 'wav' },
    });
    const speechDone = await poll(c, `/async/audio/speech/${speech.id}`);
    expect(speechDone.status).toBe('completed');
    const audio = speechDone.result as { content_type: string; data: string };
    expect(audio.content_type).toMatch(/^audio\//);
    expect(Buffer.from(audio.data, 'base64')).toEqual(fakeSpeech('say it later', 'wav'));

    const form = new FormData();
    form.set('model', 'groq/whisper-large-v3');
    form.set('file', new Blob([Buffer.alloc(1234, 1)], { type: 'audio/wav' }), 'a.wav');
    const res = await fetch(`${gw.url}/v1/async/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const tr = (await res.json()) as Job;
    const trDone = await poll(c, `/async/audio/transcriptions/${tr.id}`);
    expect(trDone.status).toBe('completed');
    expect(trDone.result).toMatchObject({ text: fakeTranscript('whisper-large-v3', 1234) });

    // A streamed transcription is refused (400) like any streamed async request.
    const streamed = new FormData();
    streamed.set('model', 'groq/whisper-large-v3');
    streamed.set('stream', 'true');
    streamed.set('file', new Blob([Buffer.alloc(10, 1)], { type: 'audio/wav' }), 'a.wav');
    const refused = await fetch(`${gw.url}/v1/async/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
      body: streamed,
    });
    expect(refused.status).toBe(400);
    await gw.close();
    gw = undefined;
  });

  it('runs after a restart the jobs a stopped process had accepted', async () => {
    // A process that takes no jobs: the job stays queued in its in-process stream, which dies with it.
    gw = await start({ GATEWAY_ASYNC_WORKERS: '0' });
    const c1 = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const job = await c1.post<Job>('/async/chat/completions', {
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'after restart' }] },
    });
    expect(job.status).toBe('queued');
    await gw.close();

    gw = await start();
    const c2 = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const done = await poll(c2, `/async/chat/completions/${job.id}`);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ choices: [{ message: { content: 'Echo from gpt-4o-mini: after restart' } }] });
  });
});
