// The pricing overrides page in a real browser: token prices (audio- and image-token rates too) typed per million
// tokens and stored per token, a scope edited, a bad price refused in words, rates cleared to null on an edit.
// Screenshots of each page go to test/artifacts/ui/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  choose,
  confirmAction,
  type GovernanceUi,
  getJson,
  loggedInPage,
  shot,
  startGovernanceUi,
} from './governance-helpers.ts';
import type { UiGateway } from './harness.ts';

let env: GovernanceUi;
let gw: UiGateway;

type Json = Record<string, unknown>;

beforeAll(async () => {
  env = await startGovernanceUi();
  gw = env.gw;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const get = (path: string): Promise<Json> => getJson(gw, path);
const open = () => loggedInPage(env);

describe('pricing overrides page', () => {
  it('creates an override from prices per million tokens, edits its scope, refuses a bad price in words, deletes it', async () => {
    // The override the previous test made through the API goes first, so the page starts from its own.
    for (const o of (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[]) {
      await gw.admin(`/api/governance/pricing-overrides/${String(o['id'])}`, { method: 'DELETE' });
    }
    const { context, page, problems } = await open();
    await page.getByRole('link', { name: 'Pricing overrides', exact: true }).click();
    await page.getByText('No pricing override').waitFor();
    await page.getByRole('button', { name: 'New pricing override' }).click();
    const dialog = page.getByRole('dialog', { name: 'New pricing override' });
    await choose(page, 'Provider', 'openai');
    await dialog.getByLabel('Model', { exact: false }).first().fill('gpt-4.1');
    await dialog.getByLabel('Input per 1M tokens').fill('2');
    await dialog.getByLabel('Output per 1M tokens').fill('8');
    await dialog.getByLabel('Cache read per 1M tokens').fill('0.5');
    await dialog.getByLabel('Per image generated').fill('0.04');
    await shot(page, 'pricing-override-form');
    await dialog.getByRole('button', { name: 'Save pricing override' }).click();
    const table = page.getByRole('table', { name: 'Pricing overrides' });
    await table.getByText('openai/gpt-4.1').waitFor();
    const [o] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(o).toMatchObject({
      scope: 'global',
      scope_id: null,
      provider: 'openai',
      model: 'gpt-4.1',
      input_cost_per_token: 0.000002,
      output_cost_per_token: 0.000008,
      cache_read_cost_per_token: 0.0000005,
      cache_write_cost_per_token: null,
      output_cost_per_image: 0.04,
    });
    await table.getByText('$2', { exact: true }).waitFor();
    await table.getByText('$8', { exact: true }).waitFor();
    await table.getByText(/cache read \$0\.5\/1M; per image generated \$0\.04/).waitFor();
    await shot(page, 'pricing-overrides');

    await page.getByRole('button', { name: 'Edit pricing of openai/gpt-4.1' }).click();
    const edit = page.getByRole('dialog', { name: 'Pricing of openai/gpt-4.1' });
    expect(await edit.getByLabel('Input per 1M tokens').inputValue()).toBe('2');
    await edit.getByLabel('Output per 1M tokens').fill('a lot');
    await edit.getByRole('button', { name: 'Save pricing override' }).click();
    await edit.getByRole('alert').filter({ hasText: 'output_cost_per_token' }).waitFor();
    expect((await edit.getByRole('alert').textContent()) ?? '').not.toContain('{');
    await edit.getByLabel('Output per 1M tokens').fill('10');
    await choose(page, 'Applies to', 'One provider');
    await choose(page, 'One provider', 'openai');
    await edit.getByRole('button', { name: 'Save pricing override' }).click();
    await table.getByText('One provider').waitFor();
    const [changed] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(changed).toMatchObject({ scope: 'provider', scope_id: 'openai', output_cost_per_token: 0.00001 });
    expect(changed?.['output_cost_per_image']).toBe(0.04);

    await confirmAction(page, 'Delete pricing of openai/gpt-4.1');
    await page.getByText('No pricing override').waitFor();
    expect((await get('/api/governance/pricing-overrides'))['total']).toBe(0);
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);

  it('sets an audio output rate per million tokens, shows it, and clears it to null on an edit', async () => {
    const { context, page, problems } = await open();
    await page.getByRole('link', { name: 'Pricing overrides', exact: true }).click();
    await page.getByText('No pricing override').waitFor();
    await page.getByRole('button', { name: 'New pricing override' }).click();
    const dialog = page.getByRole('dialog', { name: 'New pricing override' });
    await choose(page, 'Provider', 'openai');
    await dialog.getByLabel('Model', { exact: false }).first().fill('gpt-realtime');
    await dialog.getByLabel('Input per 1M tokens').fill('4');
    await dialog.getByLabel('Output per 1M tokens').fill('16');
    await dialog.getByLabel('Output audio per 1M tokens').fill('80');
    await dialog.getByRole('button', { name: 'Save pricing override' }).click();
    const table = page.getByRole('table', { name: 'Pricing overrides' });
    await table.getByText('openai/gpt-realtime').waitFor();
    const [o] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(o).toMatchObject({
      model: 'gpt-realtime',
      output_cost_per_token: 0.000016,
      input_cost_per_audio_token: null,
      output_cost_per_audio_token: 0.00008,
      cache_read_input_audio_token_cost: null,
    });
    await table.getByText('audio output $80/1M').waitFor();

    await page.getByRole('button', { name: 'Edit pricing of openai/gpt-realtime' }).click();
    const edit = page.getByRole('dialog', { name: 'Pricing of openai/gpt-realtime' });
    expect(await edit.getByLabel('Output audio per 1M tokens').inputValue()).toBe('80');
    await edit.getByLabel('Output audio per 1M tokens').fill('');
    const put = page.waitForRequest((r) => r.method() === 'PUT' && r.url().includes('/pricing-overrides/'));
    await edit.getByRole('button', { name: 'Save pricing override' }).click();
    // Sent as null (not left out), so the rate is cleared whatever PUT does with absent fields.
    expect((await put).postDataJSON()).toMatchObject({ output_cost_per_audio_token: null });
    await table.getByText('audio output').waitFor({ state: 'detached' });
    const [cleared] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(cleared).toMatchObject({ output_cost_per_audio_token: null, output_cost_per_token: 0.000016 });

    await confirmAction(page, 'Delete pricing of openai/gpt-realtime');
    await page.getByText('No pricing override').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('sets image token rates per million tokens beside the audio ones, shows them, and clears one to null on an edit', async () => {
    const { context, page, problems } = await open();
    await page.getByRole('link', { name: 'Pricing overrides', exact: true }).click();
    await page.getByText('No pricing override').waitFor();
    await page.getByRole('button', { name: 'New pricing override' }).click();
    const dialog = page.getByRole('dialog', { name: 'New pricing override' });
    await choose(page, 'Provider', 'openai');
    await dialog.getByLabel('Model', { exact: false }).first().fill('gpt-image-1');
    await dialog.getByLabel('Input per 1M tokens').fill('5');
    await dialog.getByLabel('Output per 1M tokens').fill('40');
    await dialog.getByLabel('Input image per 1M tokens').fill('10');
    await dialog.getByLabel('Cache read image per 1M tokens').fill('2.5');
    await dialog.getByLabel('Output image per 1M tokens').fill('40');
    await dialog.getByRole('button', { name: 'Save pricing override' }).click();
    const table = page.getByRole('table', { name: 'Pricing overrides' });
    await table.getByText('openai/gpt-image-1').waitFor();
    const [o] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(o).toMatchObject({
      model: 'gpt-image-1',
      input_cost_per_token: 0.000005,
      input_cost_per_image_token: 0.00001,
      cache_read_input_image_token_cost: 0.0000025,
      output_cost_per_image_token: 0.00004,
      input_cost_per_audio_token: null,
    });
    await table.getByText(/image input \$10\/1M; image output \$40\/1M; image cache read \$2\.5\/1M/).waitFor();

    await page.getByRole('button', { name: 'Edit pricing of openai/gpt-image-1' }).click();
    const edit = page.getByRole('dialog', { name: 'Pricing of openai/gpt-image-1' });
    expect(await edit.getByLabel('Input image per 1M tokens').inputValue()).toBe('10');
    await edit.getByLabel('Input image per 1M tokens').fill('');
    const put = page.waitForRequest((r) => r.method() === 'PUT' && r.url().includes('/pricing-overrides/'));
    await edit.getByRole('button', { name: 'Save pricing override' }).click();
    expect((await put).postDataJSON()).toMatchObject({ input_cost_per_image_token: null });
    await table.getByText('image input').waitFor({ state: 'detached' });
    const [cleared] = (await get('/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
    expect(cleared).toMatchObject({ input_cost_per_image_token: null, output_cost_per_image_token: 0.00004 });

    await confirmAction(page, 'Delete pricing of openai/gpt-image-1');
    await page.getByText('No pricing override').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});
