import { describe, expect, it } from 'vitest';
import { costNano } from '../../src/governance/cost.ts';
import type { ModelPrice, PricingOverride } from '../../src/governance/model.ts';
import { lookupPrice, modelCandidates, PRICE_TABLE, type PriceContext } from '../../src/governance/pricing/index.ts';

/** USD per million input and output tokens, read back exactly through costNano. */
function perMillion(price: ModelPrice): [number, number] {
  return [
    costNano(price, { prompt_tokens: 1e6, completion_tokens: 0 }) / 1e9,
    costNano(price, { prompt_tokens: 0, completion_tokens: 1e6 }) / 1e9,
  ];
}

function tableUsd(provider: string, model: string): [number, number] | undefined {
  const hit = lookupPrice(provider, model, []);
  if (hit === undefined) return undefined;
  expect(hit.source).toBe('table');
  return perMillion(hit.price);
}

describe('shipped table', () => {
  it.each([
    ['openai', 'gpt-4o', [2.5, 10]],
    ['openai', 'gpt-4o-2024-08-06', [2.5, 10]],
    ['openai', 'gpt-4o-2024-05-13', [5, 15]],
    ['openai', 'gpt-4o-mini', [0.15, 0.6]],
    ['openai', 'gpt-4o-mini-2024-07-18', [0.15, 0.6]],
    ['openai', 'gpt-4.1-2025-04-14', [2, 8]],
    ['openai', 'gpt-4.1-nano', [0.1, 0.4]],
    ['openai', 'o3', [2, 8]],
    ['openai', 'o4-mini-2025-04-16', [1.1, 4.4]],
    ['openai', 'gpt-5-2025-08-07', [1.25, 10]],
    ['openai', 'gpt-5-mini', [0.25, 2]],
    ['openai', 'text-embedding-3-small', [0.02, 0]],
    ['openai', 'text-embedding-ada-002', [0.1, 0]],
    ['azure', 'gpt-4o', [2.5, 10]],
    ['azure', 'gpt-35-turbo', [0.5, 1.5]],
    ['anthropic', 'claude-sonnet-4-5-20250929', [3, 15]],
    ['anthropic', 'claude-opus-4-1-20250805', [15, 75]],
    ['anthropic', 'claude-opus-4-5', [5, 25]],
    ['anthropic', 'claude-haiku-4-5', [1, 5]],
    ['anthropic', 'claude-3-5-haiku-20241022', [0.8, 4]],
    ['anthropic', 'claude-3-7-sonnet-latest', [3, 15]],
    ['gemini', 'gemini-2.5-pro', [1.25, 10]],
    ['gemini', 'models/gemini-2.5-flash', [0.3, 2.5]],
    ['gemini', 'gemini-2.5-flash-lite-preview-06-17', [0.1, 0.4]],
    ['gemini', 'gemini-2.0-flash-001', [0.1, 0.4]],
    ['gemini', 'gemini-embedding-001', [0.15, 0]],
    ['vertex', 'gemini-2.5-flash', [0.3, 2.5]],
    ['vertex', 'publishers/google/models/gemini-2.5-pro', [1.25, 10]],
    ['vertex', 'claude-sonnet-4-5@20250929', [3, 15]],
    ['vertex', 'claude-3-5-sonnet-v2@20241022', [3, 15]],
    ['bedrock', 'anthropic.claude-3-5-sonnet-20241022-v2:0', [3, 15]],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', [3, 15]],
    ['bedrock', 'global.anthropic.claude-haiku-4-5-20251001-v1:0', [1, 5]],
    ['bedrock', 'anthropic.claude-sonnet-4-6', [3, 15]],
    ['bedrock', 'amazon.nova-pro-v1:0', [0.8, 3.2]],
    ['bedrock', 'eu.amazon.nova-lite-v1:0', [0.06, 0.24]],
    ['bedrock', 'amazon.titan-embed-text-v2:0', [0.02, 0]],
    ['bedrock', 'amazon.titan-embed-text-v1', [0.1, 0]],
    ['bedrock', 'meta.llama3-3-70b-instruct-v1:0', [0.72, 0.72]],
    ['bedrock', 'cohere.command-r-plus-v1:0', [3, 15]],
    ['bedrock', 'cohere.embed-english-v3', [0.1, 0]],
    ['cohere', 'command-a-03-2025', [2.5, 10]],
    ['cohere', 'command-r-08-2024', [0.15, 0.6]],
    ['cohere', 'command-r7b-12-2024', [0.0375, 0.15]],
    ['cohere', 'embed-english-v3.0', [0.1, 0]],
    ['mistral', 'mistral-large-latest', [2, 6]],
    ['mistral', 'mistral-small-2503', [0.1, 0.3]],
    ['mistral', 'codestral-2501', [0.3, 0.9]],
    ['mistral', 'mistral-embed', [0.1, 0]],
    ['groq', 'llama-3.3-70b-versatile', [0.59, 0.79]],
    ['groq', 'openai/gpt-oss-120b', [0.15, 0.6]],
    ['deepseek', 'deepseek-chat', [0.28, 0.42]],
    ['deepseek', 'deepseek-reasoner', [0.28, 0.42]],
    ['xai', 'grok-4-0709', [3, 15]],
    ['xai', 'grok-3-mini', [0.3, 0.5]],
  ])('%s %s costs %j per million tokens', (provider, model, usd) => {
    expect(tableUsd(provider, model)).toEqual(usd);
  });

  it('never maps a model onto a different model', () => {
    expect(tableUsd('openai', 'gpt-4o-mini')).not.toEqual(tableUsd('openai', 'gpt-4o'));
    expect(tableUsd('openai', 'gpt-4.1-mini')).toEqual([0.4, 1.6]);
    expect(tableUsd('openai', 'o3-mini')).toEqual([1.1, 4.4]);
    expect(tableUsd('gemini', 'gemini-2.5-flash-lite')).toEqual([0.1, 0.4]);
  });

  it('reports unknown models, unknown providers and odd ids as unpriced', () => {
    expect(lookupPrice('openai', 'gpt-9-ultra', [])).toBeUndefined();
    // A gpt-4o variant the table does not list is not priced as gpt-4o (the audio ones have entries of their own).
    expect(lookupPrice('openai', 'gpt-4o-search-preview', [])).toBeUndefined();
    expect(lookupPrice('ollama', 'llama3', [])).toBeUndefined();
    expect(lookupPrice('openrouter', 'openai/gpt-4o', [])).toBeUndefined();
    expect(lookupPrice('openai', 'constructor', [])).toBeUndefined();
    expect(lookupPrice('__proto__', 'gpt-4o', [])).toBeUndefined();
    expect(lookupPrice('openai', '', [])).toBeUndefined();
    // A provider does not borrow another's table unless declared: gemini does not price Claude.
    expect(lookupPrice('gemini', 'claude-sonnet-4-5', [])).toBeUndefined();
    expect(lookupPrice('azure', 'my-deployment', [])).toBeUndefined();
  });

  it('keeps every entry sane', () => {
    for (const [provider, models] of Object.entries(PRICE_TABLE)) {
      for (const [model, price] of Object.entries(models)) {
        const where = `${provider}/${model}`;
        expect(model, where).toBe(model.trim().toLowerCase());
        expect(modelCandidates(model)[0], where).toBe(model);
        for (const v of [price.input, price.output, price.cache_read, price.cache_write]) {
          if (v !== undefined) expect(Number.isFinite(v) && v >= 0 && v < 1e-3, where).toBe(true);
        }
        if (price.cache_read !== undefined) expect(price.cache_read, where).toBeLessThanOrEqual(price.input);
        if (price.max_output_tokens !== undefined) expect(Number.isInteger(price.max_output_tokens), where).toBe(true);
        // The entry is reachable through its own provider's lookup.
        const reached = lookupPrice(provider, model, []);
        expect(reached?.price, where).toBe(price);
      }
    }
  });
});

describe('modelCandidates', () => {
  it('goes from the id as sent to its base name, one step at a time', () => {
    expect(modelCandidates(' GPT-4o-2024-08-06 ')).toEqual(['gpt-4o-2024-08-06', 'gpt-4o']);
    expect(modelCandidates('us.anthropic.claude-3-5-sonnet-20241022-v2:0')).toEqual([
      'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
      'anthropic.claude-3-5-sonnet-20241022-v2:0',
      'anthropic.claude-3-5-sonnet-20241022-v2',
      'anthropic.claude-3-5-sonnet-20241022',
      'anthropic.claude-3-5-sonnet',
    ]);
    expect(modelCandidates('models/gemini-2.0-flash-001')).toEqual([
      'models/gemini-2.0-flash-001',
      'gemini-2.0-flash-001',
      'gemini-2.0-flash',
    ]);
    expect(modelCandidates('arn:aws:bedrock:us-east-1:1:inference-profile/us.amazon.nova-pro-v1:0')).toContain(
      'amazon.nova-pro',
    );
    expect(modelCandidates('gpt-4o-mini')).toEqual(['gpt-4o-mini']);
    expect(modelCandidates('-0613')).toEqual(['-0613']);
  });
});

describe('lookupPrice with overrides', () => {
  const price = (usdIn: number): ModelPrice => ({ input: usdIn / 1e6, output: 0 });
  const o = (over: Partial<PricingOverride> & Pick<PricingOverride, 'id' | 'scope'>): PricingOverride => ({
    scope_id: null,
    provider: 'openai',
    model: 'gpt-4o',
    price: price(1),
    ...over,
  });
  const all: PricingOverride[] = [
    o({ id: 'g', scope: 'global', price: price(4) }),
    o({ id: 'p', scope: 'provider', scope_id: 'openai', price: price(3) }),
    o({ id: 'pk', scope: 'provider_key', scope_id: 'key-1', price: price(2) }),
    o({ id: 'vk', scope: 'virtual_key', scope_id: 'vk-1', price: price(1) }),
  ];
  const ctx = { providerKeyId: 'key-1', virtualKeyId: 'vk-1' };

  it('applies virtual key > provider key > provider > global > table', () => {
    const seen = (overrides: PricingOverride[], c: PriceContext = ctx) => {
      const hit = lookupPrice('openai', 'gpt-4o', overrides, c);
      return [hit?.source, hit && perMillion(hit.price)[0], hit?.override_id];
    };
    expect(seen(all)).toEqual(['override:virtual_key', 1, 'vk']);
    expect(seen(all.filter((x) => x.id !== 'vk'))).toEqual(['override:provider_key', 2, 'pk']);
    expect(seen(all, { providerKeyId: 'key-1', virtualKeyId: 'other' })).toEqual(['override:provider_key', 2, 'pk']);
    expect(seen(all, {})).toEqual(['override:provider', 3, 'p']);
    expect(seen(all.filter((x) => x.id === 'g'))).toEqual(['override:global', 4, 'g']);
    expect(seen([])).toEqual(['table', 2.5, undefined]);
  });

  it('only applies overrides for the same provider and model', () => {
    expect(lookupPrice('openai', 'gpt-4o-mini', all, ctx)?.source).toBe('table');
    expect(lookupPrice('azure', 'gpt-4o', all, ctx)?.source).toBe('table');
    const otherProviderScope = o({ id: 'x', scope: 'provider', scope_id: 'anthropic' });
    expect(lookupPrice('openai', 'gpt-4o', [otherProviderScope])?.source).toBe('table');
  });

  it('applies a base-name override to dated ids, not the other way round', () => {
    expect(lookupPrice('openai', 'gpt-4o-2024-08-06', all, ctx)?.override_id).toBe('vk');
    const dated = o({ id: 'd', scope: 'global', model: 'gpt-4o-2024-08-06' });
    expect(lookupPrice('openai', 'gpt-4o', [dated])?.source).toBe('table');
  });

  it('prices unlisted and local models from overrides, zero included', () => {
    const local = o({ id: 'l', scope: 'provider', provider: 'ollama', model: '*', price: { input: 0, output: 0 } });
    const hit = lookupPrice('ollama', 'llama3.2', [local]);
    expect(hit?.source).toBe('override:provider');
    expect(hit && costNano(hit.price, { prompt_tokens: 100, completion_tokens: 100 })).toBe(0);
  });

  it('prefers the override naming the model over a wildcard in the same scope', () => {
    const wildcard = o({ id: 'a', scope: 'global', model: '*', price: price(9) });
    const named = o({ id: 'b', scope: 'global', price: price(8) });
    expect(lookupPrice('openai', 'gpt-4o', [wildcard, named])?.override_id).toBe('b');
    const anyProvider = o({ id: 'c', scope: 'global', provider: '*', model: 'gpt-4o' });
    expect(lookupPrice('azure', 'gpt-4o', [anyProvider])?.override_id).toBe('c');
  });

  it('picks deterministically between equal overrides', () => {
    const z = o({ id: 'z', scope: 'global' });
    const a = o({ id: 'a', scope: 'global' });
    expect(lookupPrice('openai', 'gpt-4o', [z, a])?.override_id).toBe('a');
    expect(lookupPrice('openai', 'gpt-4o', [a, z])?.override_id).toBe('a');
  });
});
