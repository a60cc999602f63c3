// Shared by the ops browser tests (logs, plugins): a dashboard gateway whose openai provider is the fake OpenAI
// upstream (one key serving every model, no retries), with a browser.
import type { Browser } from 'playwright-core';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { launchBrowser, startUiGateway, type UiGateway } from './harness.ts';

export interface OpsEnv {
  gw: UiGateway;
  browser: Browser;
  upstream: OpenAIFake;
  close(): Promise<void>;
}

export async function startOpsEnv(): Promise<OpsEnv> {
  const upstream = await createOpenAIFake().start();
  const [gw, browser] = await Promise.all([
    startUiGateway({
      config: {
        providers: {
          openai: {
            network_config: { base_url: upstream.url, max_retries: 0 },
            keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaaaaaa', models: ['*'] }],
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

/** Polls see the page within a loaded machine's time, not expect.poll's default second. */
export const WAIT = { timeout: 15_000 };
