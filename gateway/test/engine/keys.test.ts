import { describe, expect, it } from 'vitest';
import { backoffMs, eligibleKeys, pickWeighted, upstreamModel } from '../../src/engine/keys.ts';
import { parseModelRef } from '../../src/engine/model-ref.ts';
import type { ProviderKey } from '../../src/providers/types.ts';

function key(id: string, models: string[], weight = 1, aliases: Record<string, string> = {}): ProviderKey {
  return { id, name: id, value: 'v', models, weight, aliases };
}

describe('model references', () => {
  it('splits at the first slash', () => {
    expect(parseModelRef('openrouter/meta-llama/llama-3-70b')).toEqual({
      provider: 'openrouter',
      model: 'meta-llama/llama-3-70b',
    });
  });
  it('rejects a model without provider', () => {
    expect(() => parseModelRef('gpt-4o')).toThrow('expected "<provider>/<model>"');
    expect(() => parseModelRef('openai/')).toThrow();
    expect(() => parseModelRef('/gpt')).toThrow();
  });
});

describe('key eligibility', () => {
  it('denies by default: empty models serve nothing, * serves all', () => {
    const keys = [key('none', []), key('all', ['*']), key('some', ['gpt-4o'])];
    expect(eligibleKeys(keys, 'gpt-4o').map((k) => k.id)).toEqual(['all', 'some']);
    expect(eligibleKeys(keys, 'o3').map((k) => k.id)).toEqual(['all']);
  });

  it('maps aliases to the provider identifier', () => {
    expect(upstreamModel(key('a', ['*'], 1, { gpt4: 'my-deployment' }), 'gpt4')).toBe('my-deployment');
    expect(upstreamModel(key('a', ['*']), 'gpt4')).toBe('gpt4');
  });
});

describe('weighted selection', () => {
  it('chooses in proportion to weight', () => {
    const keys = [key('a', ['*'], 1), key('b', ['*'], 3)];
    let seed = 0;
    const random = () => {
      seed = (seed * 9301 + 49297) % 233280;
      return seed / 233280;
    };
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) counts[pickWeighted(keys, random)!.id as 'a' | 'b']++;
    expect(counts.b / counts.a).toBeGreaterThan(2.5);
    expect(counts.b / counts.a).toBeLessThan(3.5);
  });

  it('never picks a zero-weight key while others have weight', () => {
    const keys = [key('zero', ['*'], 0), key('one', ['*'], 1)];
    for (const r of [0, 0.001, 0.5, 0.999]) expect(pickWeighted(keys, () => r)!.id).toBe('one');
  });
});

describe('backoff', () => {
  it('grows exponentially under the cap, with jitter below it', () => {
    expect(backoffMs(0, 100, 1000, () => 1)).toBe(100);
    expect(backoffMs(3, 100, 1000, () => 1)).toBe(800);
    expect(backoffMs(10, 100, 1000, () => 1)).toBe(1000);
    expect(backoffMs(3, 100, 1000, () => 0.5)).toBe(400);
  });
});
