// The replicate adapter against the Replicate fake: where predictions go (models API, deployments API, a pinned
// version), polling to the end (a failed read asked again, not a second prediction), a prediction past the
// timeout canceled, image inputs refused on generations (breaking change 9) and the size as an aspect ratio.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createReplicateFake } from '../../../test/fakes/replicate.ts';
import { aspectRatio, replicateImageGeneration } from '../../src/providers/replicate/images.ts';
import { predictionTarget, runPrediction } from '../../src/providers/replicate/predictions.ts';
import type { ImageGenerationRequest } from '../../src/schemas/images.ts';
import { callContext, failure, useFake } from './helpers.ts';

const dispatcher = new Agent();
const fake = useFake(createReplicateFake(), { dispatcher, reset: (f) => f.reset(), defaults: { pollsToFinish: 2 } });
const noWait = async () => {};

function ctx(model: string, o: { deployments?: boolean; timeout_ms?: number } = {}) {
  return callContext({
    provider: 'replicate',
    model,
    base_url: fake.url,
    dispatcher,
    key: { value: 'r8_token', replicate_key_config: { use_deployments_endpoint: o.deployments ?? false } },
    network: { timeout_ms: o.timeout_ms ?? 5000 },
  });
}

describe('predictionTarget', () => {
  it('picks the models API, the deployments API, or /predictions with a version', () => {
    expect(predictionTarget(ctx('bfl/flux')).url).toBe(`${fake.url}/v1/models/bfl/flux/predictions`);
    expect(predictionTarget(ctx('acme/prod', { deployments: true })).url).toBe(
      `${fake.url}/v1/deployments/acme/prod/predictions`,
    );
    expect(predictionTarget(ctx('acme/sdxl:abc123'))).toEqual({ url: `${fake.url}/v1/predictions`, version: 'abc123' });
    expect(() => predictionTarget(ctx('just-a-name'))).toThrow('owner/name');
  });
});

describe('runPrediction', () => {
  it('polls a running prediction until it succeeds, asking again after a failed read', async () => {
    fake.script({ pathIncludes: '/v1/predictions/', status: 503, body: { detail: 'busy' } });
    const p = await runPrediction(ctx('acme/slow'), { prompt: 'x' }, noWait);
    expect(p.status).toBe('succeeded');
    expect(fake.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(fake.requests[0]?.headers.prefer).toBe('wait=4');
  });

  it('cancels a prediction that outlives the timeout and answers a timeout', async () => {
    fake.pollsToFinish = 1_000;
    const err = await failure(runPrediction(ctx('acme/slow', { timeout_ms: 1_500 }), { prompt: 'x' }));
    expect(err.kind).toBe('timeout');
    expect(fake.last().path).toMatch(/^\/v1\/predictions\/pred\d+\/cancel$/);
    expect([...fake.predictions.values()].at(-1)?.status).toBe('canceled');
  });
});

describe('replicateImageGeneration', () => {
  it('refuses image inputs before sending anything (breaking change 9)', async () => {
    const req = { model: 'bfl/flux', prompt: 'x', init_image: 'https://e.x/a.png' } as ImageGenerationRequest;
    const err = await failure(replicateImageGeneration(req, ctx('bfl/flux')));
    expect(err.kind).toBe('invalid_request');
    expect(err.message).toContain('init_image');
    expect(err.message).toContain('/v1/images/edits');
    expect(fake.requests).toHaveLength(0);
  });

  it('maps sizes to the nearest aspect ratio, refusing one no model takes', () => {
    expect(aspectRatio('1024x1024')).toBe('1:1');
    expect(aspectRatio('1536x1024')).toBe('3:2');
    expect(aspectRatio('1024x1792')).toBe('9:16');
    expect(aspectRatio('auto')).toBeUndefined();
    expect(() => aspectRatio('1000x100')).toThrow('aspect ratio');
  });
});
