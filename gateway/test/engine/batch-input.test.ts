import { describe, expect, it } from 'vitest';
import { batchRule, checkBatchInput, lineProblem } from '../../src/engine/batch-input.ts';
import type { ProviderConfig } from '../../src/governance/model.ts';
import { GatewayError } from '../../src/http/errors.ts';

const pc = (allowed: string[]): ProviderConfig => ({
  id: 'pc',
  provider: 'openai',
  allowed_models: allowed,
  key_ids: ['*'],
  weight: 1,
  rate_limit: null,
  budgets: [],
});
const rule = batchRule('team-a', pc(['gpt-4o-mini']), { endpoint: '/v1/chat/completions' })!;
const line = (model: unknown, extra: Record<string, unknown> = {}) => ({ custom_id: 'x', body: { model }, ...extra });

async function* bytes(text: string): AsyncIterable<Uint8Array> {
  // Split across chunks to exercise line reassembly.
  for (let i = 0; i < text.length; i += 7) yield Buffer.from(text.slice(i, i + 7));
}

describe('batch input rule', () => {
  it('applies only to keys that restrict models', () => {
    expect(batchRule('k', pc(['*']), {})).toBeUndefined();
    expect(batchRule('k', undefined, {})).toBeUndefined();
    expect(rule).toMatchObject({ provider: 'openai', endpoint: '/v1/chat/completions' });
  });

  it('passes an allowed model, with or without the provider prefix', () => {
    expect(lineProblem(line('gpt-4o-mini'), 1, rule)).toBeUndefined();
    expect(lineProblem(line('openai/gpt-4o-mini'), 1, rule)).toBeUndefined();
    expect(lineProblem({ custom_id: 'p', params: { model: 'gpt-4o-mini' } }, 1, rule)).toBeUndefined();
  });

  it('refuses another model with 403 naming the request, another url or no model with 400', () => {
    const denied = lineProblem(line('gpt-4o'), 3, rule);
    expect(denied?.status).toBe(403);
    expect(denied?.message).toContain('request 3 (custom_id "x") names model gpt-4o');
    expect(lineProblem(line('gpt-4o-mini', { url: '/v1/embeddings' }), 1, rule)?.status).toBe(400);
    expect(lineProblem(line(undefined), 1, rule)?.message).toContain('body.model is required');
    expect(lineProblem(line(undefined), 1, { ...rule, batchModel: 'gpt-4o-mini' })).toBeUndefined();
  });

  it('reads a file line by line and stops at the first refused line', async () => {
    const text = `${JSON.stringify(line('gpt-4o-mini'))}\n${JSON.stringify(line('o3'))}\n{not json\n`;
    const err = await checkBatchInput({ input_file_id: 'f' }, rule, async () => bytes(text), 1024).catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toContain('request 2');
  });

  it('refuses a malformed or empty file with 400, and a file it cannot read with 403', async () => {
    const bad = await checkBatchInput({ input_file_id: 'f' }, rule, async () => bytes('{nope\n'), 1024).catch((e) => e);
    expect((bad as GatewayError).status).toBe(400);
    const empty = await checkBatchInput({ input_file_id: 'f' }, rule, async () => bytes('\n'), 1024).catch((e) => e);
    expect((empty as GatewayError).message).toContain('no requests');
    const unreadable = await checkBatchInput({ input_file_id: 'f' }, rule, undefined, 1024).catch((e) => e);
    expect((unreadable as GatewayError).status).toBe(403);
  });
});
