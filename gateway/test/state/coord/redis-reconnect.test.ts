// The Redis client's reconnect delay: short, so governed requests are served again soon after Redis is back.
import { describe, expect, it } from 'vitest';
import { reconnectDelayMs } from '../../../src/state/coord/redis.ts';

describe('reconnectDelayMs', () => {
  it('backs off from 50 ms and never waits more than 200 ms between attempts', () => {
    const delays = Array.from({ length: 50 }, (_, i) => reconnectDelayMs(i + 1));
    expect(delays.slice(0, 4)).toEqual([50, 100, 200, 200]);
    expect(Math.max(...delays)).toBe(200);
  });
});
