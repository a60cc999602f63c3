// Shared set-up of the governance pages' browser tests (governance-*.test.ts): a gateway serving the dashboard with
// openai pointed at a fake upstream (or at nothing), pages whose waits fail early with what they awaited, and picking
// an option of a Mantine select by its label.
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { launchBrowser, logIn, newPage, screenshot, startUiGateway, type UiGateway } from './harness.ts';

export interface GovernanceUi {
  gw: UiGateway;
  browser: Browser;
  /** The fake OpenAI upstream openai's key calls. */
  upstream: OpenAIFake;
  close(): Promise<void>;
}

/** A gateway with one openai key (`k1`, every model) on a fake upstream, and a headless browser. */
export async function startGovernanceUi(): Promise<GovernanceUi> {
  const upstream = await createOpenAIFake().start();
  const [gw, browser] = await Promise.all([
    startUiGateway({
      config: {
        providers: {
          openai: {
            network_config: { base_url: upstream.url, max_retries: 0 },
            keys: [{ id: 'k1', name: 'main', value: 'sk-upstream-0123456789abcdef', models: ['*'] }],
          },
        },
      },
    }),
    launchBrowser(),
  ]);
  return {
    gw,
    browser,
    upstream,
    async close() {
      await browser.close();
      await gw.close();
      await upstream.stop();
    },
  };
}

/** A page whose waits fail (naming what was awaited) well before the test's own timeout. */
export async function openPage(browser: Browser): ReturnType<typeof newPage> {
  const p = await newPage(browser);
  p.page.setDefaultTimeout(15_000);
  return p;
}

/** A page of the dashboard, logged in as the admin. */
export async function loggedInPage(env: GovernanceUi): ReturnType<typeof newPage> {
  const p = await openPage(env.browser);
  await logIn(p.page, env.gw);
  return p;
}

/** A management API answer as JSON, which must be a 200. */
export async function getJson(gw: UiGateway, path: string): Promise<Record<string, unknown>> {
  const res = await gw.admin(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Picks `option` in the Mantine select labelled `label`. */
export async function choose(page: Page, label: string, option: string): Promise<void> {
  await page.getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/** Clicks the destructive button named `button`, then `answer` in the confirmation dialog. */
export async function confirmAction(page: Page, button: string, answer: 'Delete' | 'Remove' = 'Delete'): Promise<void> {
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: answer }).click();
}

/** A full-page screenshot taken from the top (a scrolled page would draw the fixed header and navigation mid-page). */
export async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate('window.scrollTo(0, 0)');
  await screenshot(page, name);
}

/**
 * The page of a row the operator wrote: a notice naming `ownerRef`, the name field disabled, and none of `buttons`
 * (save, delete, add) offered.
 */
export async function expectOperatorOwned(page: Page, ownerRef: string, buttons: string[]): Promise<void> {
  const notice = page.getByRole('note').filter({ hasText: 'Managed by Kubernetes' });
  await notice.waitFor();
  expect(await notice.textContent()).toContain(ownerRef);
  expect(await page.getByLabel('Name', { exact: false }).first().isDisabled()).toBe(true);
  for (const name of buttons) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
}
