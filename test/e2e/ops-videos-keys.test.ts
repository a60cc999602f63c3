// A video lives in the provider account of the key that made it: the gateway remembers that key when the job is
// created (through the inference core), so retrieve, download and delete go straight to it instead of trying
// the provider's keys in turn.
import { describe, expect, it } from 'vitest';
import { createOpenAIVideosFake, type VideoFake } from '../fakes/openai-videos.ts';
import { keyUsed } from './governance-helpers.ts';
import { atFake, useProviderGateway } from './providers-helpers.ts';

const MAKER = 'sk-openai-videos-maker-1111';
const OTHER = 'sk-openai-videos-other-2222';

let openai: VideoFake;
const env = useProviderGateway({
  fakes: () => [openai],
  start: async () => {
    openai = await createOpenAIVideosFake().start();
    return {
      // The maker weighs 0: only a pin or the remembered creator sends a call to it.
      openai: atFake(
        openai.url,
        { id: 'maker', name: 'maker', value: MAKER, models: ['*'], weight: 0 },
        { id: 'other', name: 'other', value: OTHER, models: ['*'], weight: 1 },
      ),
    };
  },
});

describe('the key that made a video', () => {
  it('is the only one a later retrieve, remix and delete are sent with', async () => {
    const video = await env.client.videos.create(
      { model: 'openai/sora-2' as 'sora-2', prompt: 'A lighthouse at dusk', seconds: '4' },
      { headers: { 'x-gateway-key-name': 'maker' } },
    );
    expect(keyUsed(openai.last())).toBe(MAKER);

    openai.reset();
    expect((await env.client.videos.retrieve(video.id)).id).toBe(video.id);
    expect(openai.requests.map(keyUsed)).toEqual([MAKER]);

    // A remix runs through the inference core: it is pinned to the key that holds its source.
    openai.reset();
    const remix = await env.client.videos.remix(video.id, { prompt: 'The same lighthouse at dawn' });
    expect(openai.requests.map((r) => `${r.path} ${keyUsed(r)}`)).toEqual([
      `/v1/videos/${video.id.split(':')[0]}/remix ${MAKER}`,
    ]);
    openai.reset();
    await env.client.videos.retrieve(remix.id);
    expect(openai.requests.map(keyUsed)).toEqual([MAKER]);

    openai.reset();
    await env.client.videos.delete(video.id);
    expect(openai.requests.map((r) => `${r.method} ${keyUsed(r)}`)).toEqual([`DELETE ${MAKER}`]);
  });
});
