// What a video job is billed and reserved by: its seconds and its size (prices differ by size), from the answer for
// the charge and from the request (a remix: its source) for the reservation.
import { describe, expect, it } from 'vitest';
import { videoCreateOp, videoRemixOp, videoUsage } from '../../../src/engine/ops/videos.ts';
import type { VideoCreateRequest, VideoJob } from '../../../src/schemas/videos.ts';

const job = (over: Partial<VideoJob>): VideoJob => ({
  id: 'video_1',
  object: 'video',
  model: 'sora-2-pro',
  status: 'queued',
  progress: 0,
  prompt: 'p',
  seconds: '8',
  size: '1792x1024',
  created_at: 0,
  completed_at: null,
  expires_at: null,
  remixed_from_video_id: null,
  error: null,
  ...over,
});

const create = (over: Partial<VideoCreateRequest>): VideoCreateRequest => ({
  model: 'openai/sora-2-pro',
  prompt: 'p',
  extra: {},
  ...over,
});

describe('videoUsage', () => {
  it('bills the seconds at the size the answer reports', () => {
    expect(videoUsage(job({}))?.units).toEqual({ video_seconds: 8, video_size: '1792x1024' });
    expect(videoUsage(job({ seconds: '4', size: '720x1280' }))?.units).toEqual({
      video_seconds: 4,
      video_size: '720x1280',
    });
  });

  it('leaves the size out when the answer has none', () => {
    expect(videoUsage(job({ size: '' }))?.units).toEqual({ video_seconds: 8 });
  });
});

describe('reservation units', () => {
  it('a create reserves the asked seconds at the asked size; no size is left for the dearest', () => {
    expect(videoCreateOp.estimateUnits?.(create({ seconds: '12', size: '1792x1024' }))).toEqual({
      video_seconds: 12,
      video_size: '1792x1024',
    });
    expect(videoCreateOp.estimateUnits?.(create({}))).toEqual({ video_seconds: 8 });
  });

  it('a remix reserves its source’s length and size, else Sora’s longest at the dearest size', () => {
    const remix = { model: 'openai/sora-2-pro', video_id: 'video_1', prompt: 'p', extra: {} };
    expect(videoRemixOp.estimateUnits?.({ ...remix, seconds: '4', size: '1280x720' })).toEqual({
      video_seconds: 4,
      video_size: '1280x720',
    });
    expect(videoRemixOp.estimateUnits?.(remix)).toEqual({ video_seconds: 12 });
  });
});
