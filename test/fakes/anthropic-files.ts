// A fake of Anthropic's Files API (beta `files-api-2025-04-14`): uploads read as multipart (the file part alone),
// RFC 3339 file metadata, `after_id` pages, `file_deleted`, and downloads refused for uploaded files as Anthropic
// refuses them (only files its tools create are downloadable).
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { formParts } from './openai-files.ts';
import { type RecordedRequest, type Route, sendJson } from './server.ts';

export interface AnthropicStoredFile {
  meta: {
    id: string;
    type: 'file';
    filename: string;
    mime_type: string;
    size_bytes: number;
    created_at: string;
    downloadable: boolean;
  };
  content: Buffer;
}

/** Anthropic's error body. */
export function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } });
}

/** Refuses a request without Anthropic's key and version headers (and the beta header when given). */
export function checkHeaders(req: RecordedRequest, res: ServerResponse, beta?: string): boolean {
  if (!req.headers['x-api-key']) {
    anthropicError(res, 401, 'authentication_error', 'x-api-key header is required');
    return false;
  }
  if (!req.headers['anthropic-version']) {
    anthropicError(res, 400, 'invalid_request_error', 'anthropic-version header is required');
    return false;
  }
  if (beta && !String(req.headers['anthropic-beta'] ?? '').includes(beta)) {
    anthropicError(res, 400, 'invalid_request_error', `the Files API requires the anthropic-beta header ${beta}`);
    return false;
  }
  return true;
}

const BETA = 'files-api-2025-04-14';

/** The Files API's routes over `files`; `store` adds a file (a downloadable one, as a tool would create). */
export function anthropicFileRoutes(files: Map<string, AnthropicStoredFile>): Route[] {
  const byPath = (req: RecordedRequest) => files.get(decodeURIComponent(req.path.split('/')[3] ?? ''));
  const notFound = (res: ServerResponse) => anthropicError(res, 404, 'not_found_error', 'File not found');
  return [
    {
      method: 'POST',
      path: '/v1/files',
      handler: (req, res) => {
        if (!checkHeaders(req, res, BETA)) return;
        const form = formParts(req);
        if (!form.file) return anthropicError(res, 400, 'invalid_request_error', 'file: Field required');
        if (Object.keys(form.fields).length > 0) {
          return anthropicError(res, 400, 'invalid_request_error', `unexpected fields ${Object.keys(form.fields)}`);
        }
        sendJson(res, 200, storeAnthropicFile(files, form.file.filename, form.file.data, false).meta);
      },
    },
    {
      method: 'GET',
      path: '/v1/files',
      handler: (req, res) => {
        if (!checkHeaders(req, res, BETA)) return;
        const q = new URL(req.url, 'http://x').searchParams;
        let all = [...files.values()].map((f) => f.meta);
        const after = q.get('after_id');
        if (after) all = all.slice(all.findIndex((f) => f.id === after) + 1);
        const limit = Number(q.get('limit') ?? 20);
        const data = all.slice(0, limit);
        sendJson(res, 200, {
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: all.length > limit,
        });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/files\/[^/]+$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res, BETA)) return;
        const f = byPath(req);
        if (f) sendJson(res, 200, f.meta);
        else notFound(res);
      },
    },
    {
      method: 'DELETE',
      path: /^\/v1\/files\/[^/]+$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res, BETA)) return;
        const f = byPath(req);
        if (!f) return notFound(res);
        files.delete(f.meta.id);
        sendJson(res, 200, { id: f.meta.id, type: 'file_deleted' });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/files\/[^/]+\/content$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res, BETA)) return;
        const f = byPath(req);
        if (!f) return notFound(res);
        if (!f.meta.downloadable) return anthropicError(res, 400, 'invalid_request_error', 'File is not downloadable');
        res.writeHead(200, { 'content-type': f.meta.mime_type, 'content-length': String(f.content.length) });
        res.end(f.content);
      },
    },
  ];
}

export function storeAnthropicFile(
  files: Map<string, AnthropicStoredFile>,
  filename: string,
  content: Buffer,
  downloadable: boolean,
): AnthropicStoredFile {
  const f: AnthropicStoredFile = {
    meta: {
      id: `file_011${randomUUID().replaceAll('-', '').slice(0, 20)}`,
      type: 'file',
      filename,
      mime_type: filename.endsWith('.png') ? 'image/png' : 'text/plain',
      size_bytes: content.length,
      created_at: new Date().toISOString(),
      downloadable,
    },
    content,
  };
  files.set(f.meta.id, f);
  return f;
}
