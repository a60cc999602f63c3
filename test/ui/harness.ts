// Browser tests of the dashboard: Debian's Chromium (headless, /usr/bin/chromium; scripts/test-deps.sh installs
// it) driven by playwright-core, against a gateway from the test harness serving a build of ui/.
// The build is made once per content of ui/ (a directory named by its hash, renamed into place, so parallel
// test files never build twice nor see half a build) and never touches ui/dist.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ADMIN_KEY, startTestGateway, type TestGateway, type TestGatewayOptions } from '../harness/gateway.ts';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const UI = path.join(REPO, 'ui');
export const ARTIFACTS = path.join(REPO, 'test/artifacts/ui');
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out.sort();
}

/** A directory holding a build of ui/ as it is now (built at most once per content). */
export async function builtUi(): Promise<string> {
  const hash = createHash('sha256');
  const inputs = [
    ...(await filesUnder(path.join(UI, 'src'))),
    path.join(UI, 'index.html'),
    path.join(UI, 'vite.config.ts'),
    path.join(UI, 'package.json'),
    ...(await filesUnder(path.join(UI, 'public'))),
  ];
  for (const f of inputs)
    hash
      .update(path.relative(UI, f))
      .update('\0')
      .update(await readFile(f))
      .update('\0');
  const target = path.join(tmpdir(), `model-gateway-ui-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path.join(target, 'index.html'))) return target;
  const work = `${target}.${process.pid}.${Date.now()}`;
  const vite = path.join(REPO, 'node_modules/vite/bin/vite.js');
  await run(process.execPath, [vite, 'build', '--outDir', work, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: UI,
    maxBuffer: 16 * 1024 * 1024,
  });
  await rename(work, target).catch(async (err: unknown) => {
    // Another test file finished the same build first: use its.
    await rm(work, { recursive: true, force: true });
    if (!existsSync(path.join(target, 'index.html'))) throw err;
  });
  return target;
}

export interface UiGateway extends TestGateway {
  /** The dashboard's address (`<gateway>/ui/`). */
  uiUrl: string;
}

/** A harness gateway (real Postgres and Redis) serving the current build of the dashboard. */
export async function startUiGateway(opts: TestGatewayOptions = {}): Promise<UiGateway> {
  const uiDir = await builtUi();
  const gw = await startTestGateway({ ...opts, env: { GATEWAY_UI_DIR: uiDir, ...opts.env } });
  return Object.assign(gw, { uiUrl: `${gw.url}/ui/` });
}

/** Headless Chromium. Root (CI, the build machines) needs --no-sandbox. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: run scripts/test-deps.sh (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** A laptop-sized page; console errors and failed requests are collected so tests can assert there are none. */
export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  // Reduced motion: the dashboard then skips its transitions, so screenshots never catch one half-way.
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

/** Opens the dashboard and logs in with the admin API key (or the given user). */
export async function logIn(
  page: Page,
  gw: UiGateway,
  user = { username: 'admin', password: ADMIN_KEY },
): Promise<void> {
  await page.goto(gw.uiUrl);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password or admin API key').fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** Saves a full-page screenshot under test/artifacts/ui/<name>.png (kept as a test artefact, gitignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if ((await stat(file)).size === 0) throw new Error(`empty screenshot ${file}`);
  return file;
}
