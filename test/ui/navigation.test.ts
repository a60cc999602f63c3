// Every page in the navigation opens without a console error and gets a screenshot (test/artifacts/ui/page-*.png);
// the keyboard reaches the skip link first, then the sections.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, logIn, newPage, screenshot, startUiGateway, type UiGateway } from './harness.ts';

let gw: UiGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startUiGateway(), launchBrowser()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('navigation', () => {
  it('opens every section with a heading and no console error', async () => {
    const { context, page, problems } = await newPage(browser);
    await logIn(page, gw);
    const nav = page.getByRole('navigation', { name: 'Dashboard sections' });
    const labels = await nav.getByRole('link').allTextContents();
    expect(labels.length).toBeGreaterThanOrEqual(2);
    expect(labels).toContain('Providers & keys');
    expect(labels).toContain('Config');
    for (const label of labels) {
      const link = nav.getByRole('link', { name: label, exact: true });
      await link.click();
      // A page's code is loaded on its first visit: on a busy machine that takes longer than expect.poll's 1 s.
      await expect.poll(() => link.getAttribute('aria-current'), { message: label, timeout: 15_000 }).toBe('page');
      await page.locator('#main h2').first().waitFor();
      await page.waitForLoadState('networkidle');
      await screenshot(page, `page-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
    }
    expect(problems).toEqual([]);
    await context.close();
  });

  it('is usable from the keyboard: skip link first, then the sections', async () => {
    const { context, page } = await newPage(browser);
    await logIn(page, gw);
    await page.goto(`${gw.uiUrl}config`);
    await page.getByRole('heading', { name: 'Config', level: 2 }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to content');
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push(((await page.locator(':focus').textContent()) ?? '').trim());
    }
    expect(order).toContain('Log out');
    expect(order).toContain('Providers & keys');
    // Enter on a focused section opens it.
    await page.getByRole('link', { name: 'Providers & keys' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Providers', level: 2 }).waitFor();
    await context.close();
  });
});
