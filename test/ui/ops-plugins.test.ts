// Plugins and the semantic cache in a real browser: settings edited as JSON (bad JSON said here, a field the
// gateway refuses said in its words), the cache switched on from the table, a request answered from the cache
// through the official openai SDK, its cache record shown, and its entry cleared by cache id (then by cache key)
// from the page, after which the same request reaches the model again.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, createVk, logOf, pc } from '../e2e/governance-helpers.ts';
import type { OpenAIFake } from '../fakes/openai.ts';
import { type GovernanceUi, startGovernanceUi } from './governance-helpers.ts';
import { logIn, newPage, screenshot, type UiGateway } from './harness.ts';

/** Polls see the page within a loaded machine's time, not expect.poll's default second. */
const WAIT = { timeout: 15_000 };

let env: GovernanceUi;
let gw: UiGateway;
let browser: Browser;
let upstream: OpenAIFake;
let client: OpenAI;

const QUESTION = 'what does the cache remember';

beforeAll(async () => {
  env = await startGovernanceUi();
  ({ gw, browser, upstream } = env);
  const vk = await createVk(gw, { name: 'cache-user', provider_configs: [pc('openai')] });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const chats = () => upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

/** Asks the question; the answer's cache record and the request id. */
async function ask(): Promise<{ debug: Record<string, unknown>; id: string }> {
  const { data, response } = await client.chat.completions
    .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: QUESTION }] })
    .withResponse();
  // extra_fields ride on the SDK's parsed answer (unknown fields are kept)
  const extra = (data as unknown as { extra_fields?: { cache_debug?: Record<string, unknown> } }).extra_fields;
  const id = String(response.headers.get('x-gateway-request-id'));
  await logOf(gw, id);
  // Entries are written after the answer left; wait for them before the next lookup.
  await gw.rt.plugins.semanticCache?.flush();
  return { debug: extra?.cache_debug ?? {}, id };
}

describe('plugins and cache page', () => {
  it('edits settings as JSON, turns the cache on, and clears a cached answer by cache id and by key', async () => {
    const { context, page, problems } = await newPage(browser);
    page.setDefaultTimeout(15_000);
    await logIn(page, gw);
    await page.getByRole('link', { name: 'Plugins & cache' }).click();
    const table = page.getByRole('table', { name: 'Plugins' });
    const cacheSwitch = table.getByRole('switch', { name: 'Turn semantic_cache on' });
    await cacheSwitch.waitFor();
    expect(await cacheSwitch.isChecked()).toBe(false);
    await screenshot(page, 'plugins');

    await table.getByRole('button', { name: 'Edit settings of semantic_cache' }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings of semantic_cache' });
    const json = dialog.getByLabel('Settings (JSON)');
    // Not JSON: said here, nothing sent.
    await json.fill('{"ttl_seconds": }');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await dialog
      .getByText(/Not valid JSON/)
      .first()
      .waitFor();
    // JSON the gateway refuses: its words, naming the field.
    await json.fill('{"ttl_seconds": "soon"}');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    const refusal = dialog.getByRole('alert').filter({ hasText: 'ttl_seconds' });
    await refusal.waitFor();
    expect(await refusal.textContent()).not.toContain('{');
    await screenshot(page, 'plugin-settings-error');
    expect((await adminJson(gw, '/api/plugins/semantic_cache'))['source']).toBe('default');

    await json.fill('{"default_cache_key": "ui-cache", "ttl_seconds": 600}');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await dialog.waitFor({ state: 'detached' });
    await table
      .getByRole('row', { name: /semantic_cache/ })
      .getByText('default_cache_key: "ui-cache"')
      .waitFor();
    // Toggled from the keyboard (the switch's track covers the input for the mouse).
    await cacheSwitch.focus();
    await page.keyboard.press('Space');
    await table.getByRole('switch', { name: 'Turn semantic_cache off' }).waitFor();
    const stored = await adminJson(gw, '/api/plugins/semantic_cache');
    expect(stored).toMatchObject({
      enabled: true,
      source: 'api',
      config: { default_cache_key: 'ui-cache', ttl_seconds: 600 },
    });
    // This pod runs it (the status is the answering pod's).
    await expect
      .poll(
        async () => ((await adminJson(gw, '/api/plugins/semantic_cache'))['status'] as { status: string }).status,
        WAIT,
      )
      .toBe('active');

    // A miss stores the answer; the same question is then answered from the cache without the model.
    const miss = await ask();
    expect(miss.debug).toMatchObject({ cache_hit: false });
    const hit = await ask();
    expect(hit.debug).toMatchObject({ cache_hit: true, cache_id: miss.debug['cache_id'] });
    expect(chats()).toBe(1);
    const cacheId = String(hit.debug['cache_id']);

    // The page lists the cached requests with their record.
    const panel = page.getByRole('region', { name: 'Semantic cache' });
    await panel.getByRole('button', { name: 'Refresh' }).click();
    const cached = page.getByRole('table', { name: 'Cached requests' });
    await expect.poll(() => cached.getByRole('row').count(), WAIT).toBe(3);
    await cached.getByRole('row').filter({ hasText: 'hit' }).getByRole('button', { name: 'Show record' }).click();
    const record = page.getByRole('region', { name: `Cache record of request ${hit.id}` });
    await record.getByText('hit (direct)').waitFor();
    await record.getByText(cacheId).waitFor();
    await screenshot(page, 'plugins-cache');

    // A cache id that is not one is said before anything is sent.
    const byId = panel.getByRole('form', { name: 'Clear by cache id' });
    await byId.getByLabel('Cache id').fill('not-a-cache-id');
    await byId.getByRole('button', { name: 'Clear entry' }).click();
    await byId.getByText('A cache id is a UUID').waitFor();

    await byId.getByLabel('Cache id').fill(cacheId);
    await byId.getByRole('button', { name: 'Clear entry' }).click();
    await panel
      .getByRole('status')
      .filter({ hasText: `cache entry ${cacheId} cleared` })
      .waitFor();
    const after = await ask();
    expect(after.debug).toMatchObject({ cache_hit: false });
    expect(chats()).toBe(2);

    // The new entry goes with its cache key.
    const byKey = panel.getByRole('form', { name: 'Clear by cache key' });
    await byKey.getByLabel('Cache key').fill('ui-cache');
    await byKey.getByRole('button', { name: 'Clear key' }).click();
    await panel.getByRole('status').filter({ hasText: '1 cache entry of key ui-cache cleared' }).waitFor();
    expect((await ask()).debug).toMatchObject({ cache_hit: false });
    expect(chats()).toBe(3);

    // The entry stored again, cleared from its row in the list of cached requests.
    expect((await ask()).debug).toMatchObject({ cache_hit: true });
    await panel.getByRole('button', { name: 'Refresh' }).click();
    await panel
      .getByRole('button', { name: `Clear cache entry ${cacheId}` })
      .first()
      .click();
    await panel
      .getByRole('status')
      .filter({ hasText: `cache entry ${cacheId} cleared` })
      .waitFor();
    expect((await ask()).debug).toMatchObject({ cache_hit: false });
    expect(chats()).toBe(4);
    await screenshot(page, 'plugins-cache-cleared');
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  }, 90_000);
});
