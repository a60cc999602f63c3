// A fake of the Gemini API's Files API: resumable uploads (`start`, then `upload` chunks in multiples of the
// 256 KiB granularity at the right offsets, the last `upload, finalize`; `cancel` drops a session), File resources (`files/{id}`, int64
// sizes as strings, RFC 3339 times), token pages (`pageSize`, default 10), delete, and downloads of generated files only.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, type Route, sendJson } from './server.ts';

export interface GeminiStoredFile {
  meta: {
    name: string;
    displayName: string;
    mimeType: string;
    sizeBytes: string;
    createTime: string;
    updateTime: string;
    expirationTime: string;
    sha256Hash: string;
    uri: string;
    state: 'ACTIVE';
    source: 'UPLOADED' | 'GENERATED';
  };
  content: Buffer;
}

export const GRANULARITY = 256 * 1024;

export function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  sendJson(res, code, { error: { code, message, status } });
}

export function checkKey(req: RecordedRequest, res: ServerResponse): boolean {
  if (req.headers['x-goog-api-key']) return true;
  googleError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers.");
  return false;
}

export function storeGeminiFile(
  files: Map<string, GeminiStoredFile>,
  host: string,
  displayName: string,
  mimeType: string,
  content: Buffer,
  source: 'UPLOADED' | 'GENERATED',
): GeminiStoredFile {
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const now = new Date();
  const f: GeminiStoredFile = {
    meta: {
      name: `files/${id}`,
      displayName,
      mimeType,
      sizeBytes: String(content.length),
      createTime: now.toISOString(),
      updateTime: now.toISOString(),
      expirationTime: new Date(now.getTime() + 48 * 3600_000).toISOString(),
      sha256Hash: 'ZmFrZQ==',
      uri: `http://${host}/v1beta/files/${id}`,
      state: 'ACTIVE',
      source,
    },
    content,
  };
  files.set(f.meta.name, f);
  return f;
}

interface Session {
  displayName: string;
  mimeType: string;
  chunks: Buffer[];
  received: number;
}

export function geminiFileRoutes(files: Map<string, GeminiStoredFile>): Route[] {
  const sessions = new Map<string, Session>();
  const byPath = (req: RecordedRequest) => files.get(`files/${decodeURIComponent(req.path.split('/')[3] ?? '')}`);
  const notFound = (res: ServerResponse) => googleError(res, 404, 'NOT_FOUND', 'File not found.');
  return [
    {
      method: 'POST',
      path: '/upload/v1beta/files',
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const command = String(req.headers['x-goog-upload-command'] ?? '');
        if (command === 'start') {
          if (req.headers['x-goog-upload-protocol'] !== 'resumable') {
            return googleError(res, 400, 'INVALID_ARGUMENT', 'x-goog-upload-protocol must be resumable');
          }
          const file = (req.json as { file?: { displayName?: string } } | undefined)?.file;
          const id = randomUUID();
          sessions.set(id, {
            displayName: file?.displayName ?? '',
            mimeType: String(req.headers['x-goog-upload-header-content-type'] ?? 'application/octet-stream'),
            chunks: [],
            received: 0,
          });
          res.writeHead(200, {
            'x-goog-upload-url': `http://${req.headers.host}/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable`,
            'x-goog-upload-status': 'active',
            'x-goog-upload-chunk-granularity': String(GRANULARITY),
          });
          res.end();
          return;
        }
        const id = new URL(req.url, 'http://x').searchParams.get('upload_id') ?? '';
        const s = sessions.get(id);
        if (!s) return googleError(res, 404, 'NOT_FOUND', 'upload session not found');
        if (command === 'cancel') {
          // The session and every chunk it received are dropped; no file is made.
          sessions.delete(id);
          res.writeHead(200, { 'x-goog-upload-status': 'cancelled' });
          res.end();
          return;
        }
        if (Number(req.headers['x-goog-upload-offset']) !== s.received) {
          return googleError(
            res,
            400,
            'INVALID_ARGUMENT',
            `offset ${req.headers['x-goog-upload-offset']} != ${s.received}`,
          );
        }
        const finalize = command === 'upload, finalize';
        if (!finalize && (command !== 'upload' || req.body.length % GRANULARITY !== 0)) {
          return googleError(res, 400, 'INVALID_ARGUMENT', 'a chunk must be a multiple of the granularity');
        }
        s.chunks.push(req.body);
        s.received += req.body.length;
        if (!finalize) {
          res.writeHead(200, { 'x-goog-upload-status': 'active' });
          res.end();
          return;
        }
        sessions.delete(id);
        const f = storeGeminiFile(
          files,
          String(req.headers.host),
          s.displayName,
          s.mimeType,
          Buffer.concat(s.chunks),
          'UPLOADED',
        );
        sendJson(res, 200, { file: f.meta }, { 'x-goog-upload-status': 'final' });
      },
    },
    {
      method: 'GET',
      path: '/v1beta/files',
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        // Pages by token as Google does: the token is opaque to callers (here, the index to go on from).
        const q = new URL(req.url, 'http://x').searchParams;
        const size = Math.min(Number(q.get('pageSize') ?? 10) || 10, 100);
        const from = Number(q.get('pageToken') ?? 0) || 0;
        const all = [...files.values()].map((f) => f.meta);
        const page = all.slice(from, from + size);
        const next = from + size < all.length ? { nextPageToken: String(from + size) } : {};
        sendJson(res, 200, { files: page, ...next });
      },
    },
    {
      method: 'GET',
      path: /^\/v1beta\/files\/[^/]+$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const f = byPath(req);
        if (f) sendJson(res, 200, f.meta);
        else notFound(res);
      },
    },
    {
      method: 'DELETE',
      path: /^\/v1beta\/files\/[^/]+$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const f = byPath(req);
        if (!f) return notFound(res);
        files.delete(f.meta.name);
        sendJson(res, 200, {});
      },
    },
    {
      method: 'GET',
      path: /^\/download\/v1beta\/files\/[^/]+:download$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const id = decodeURIComponent(req.path.split('/')[4] ?? '').replace(/:download$/, '');
        const f = files.get(`files/${id}`);
        if (!f) return notFound(res);
        if (new URL(req.url, 'http://x').searchParams.get('alt') !== 'media') {
          return googleError(res, 400, 'INVALID_ARGUMENT', 'alt=media is required');
        }
        if (f.meta.source !== 'GENERATED') {
          return googleError(res, 400, 'INVALID_ARGUMENT', 'Only generated files can be downloaded.');
        }
        res.writeHead(200, { 'content-type': f.meta.mimeType, 'content-length': String(f.content.length) });
        res.end(f.content);
      },
    },
  ];
}
