// The dashboard: the static files of the ui/ workspace's build, under /ui (a public family: the files hold no
// data; every call the page makes goes to /api with the session). Hashed assets are immutable; any other path
// under /ui gets index.html, where the page's router takes over. Every answer carries a strict CSP: nothing
// is loaded from elsewhere, and the page may only call its own origin.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { GatewayError } from '../http/errors.ts';
import { documented } from '../http/openapi.ts';
import type { Runtime } from '../runtime.ts';

const doc = documented('Dashboard');
const HTML = 'text/html';

/** The repository's ui/dist (also where the image puts it: /app/ui/dist). */
const DEFAULT_UI_DIR = fileURLToPath(new URL('../../../ui/dist/', import.meta.url));

// Mantine sets style attributes and one <style> element of CSS variables: styles allow inline, scripts do not.
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS = 'assets/';

function secureHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', UI_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

async function isFile(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}

export function registerUiRoutes(app: FastifyInstance, rt: Runtime): void {
  const root = path.resolve(rt.env.uiDir ?? DEFAULT_UI_DIR);
  // Only reply.sendFile (serve: false): the routes below are ours, documented and in the census.
  app.register(fastifyStatic, { root, serve: false, suppressWarning: true });

  const notBuilt = () =>
    new GatewayError(
      'not_found',
      `the dashboard is not built (no ${path.join(root, 'index.html')}): run \`npm run build -w ui\` (make run does)`,
    );

  const sendIndex = async (reply: FastifyReply) => {
    if (!(await isFile(path.join(root, 'index.html')))) throw notBuilt();
    secureHeaders(reply);
    return reply
      .sendFile('index.html', root, { cacheControl: false, etag: true, lastModified: false })
      .header('cache-control', 'no-cache');
  };

  app.get(
    '/',
    doc({
      operationId: 'redirectToDashboard',
      summary: 'Redirect to the dashboard',
      description: 'A browser opening the gateway’s address lands on the dashboard (`/ui/`).',
      responses: { 302: { description: 'To /ui/', text: HTML } },
    }),
    // With a small page for clients that do not follow redirects (and a content type, as every answer has).
    async (_req, reply) =>
      reply
        .code(302)
        .header('location', '/ui/')
        .type(HTML)
        .send('<!doctype html><title>Model gateway</title><a href="/ui/">The dashboard is at /ui/</a>'),
  );

  app.get(
    '/ui',
    doc({
      operationId: 'getDashboard',
      summary: 'The dashboard',
      description: 'The dashboard’s page (`/ui/` and every client route under it serve it too).',
      responses: { 200: { description: 'The page', text: HTML } },
      errors: [404],
    }),
    async (_req, reply) => sendIndex(reply),
  );

  app.get<{ Params: { '*': string } }>(
    '/ui/*',
    doc({
      operationId: 'getDashboardFile',
      summary: 'A file of the dashboard, or its page for a client route',
      description:
        'Built files (hashed names under `assets/`, cached as immutable) or, for any other path, the page itself ' +
        '(`no-cache`). 404 when the dashboard is not built or an asset does not exist.',
      responses: { 200: { description: 'The file or the page', text: [HTML, 'text/javascript', 'text/css'] } },
      errors: [404],
    }),
    async (req, reply) => {
      const rel = req.params['*'] ?? '';
      const segments = rel.split('/');
      const plain = !segments.some((s) => s === '..' || s.startsWith('.'));
      if (plain && rel !== '' && rel !== 'index.html' && (await isFile(path.join(root, rel)))) {
        secureHeaders(reply);
        if (rel.startsWith(ASSETS)) {
          return reply.sendFile(rel, root, { immutable: true, maxAge: '365d', dotfiles: 'deny' });
        }
        return reply.sendFile(rel, root, { maxAge: '1h', dotfiles: 'deny' });
      }
      if (rel.startsWith(ASSETS)) {
        if (!(await isFile(path.join(root, 'index.html')))) throw notBuilt();
        throw new GatewayError('not_found', `no dashboard file ${rel}`);
      }
      return sendIndex(reply);
    },
  );
}
