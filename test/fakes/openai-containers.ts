// A fake of OpenAI's Containers API (also Azure OpenAI's v1 API under `/openai/v1`): containers and their files
// in OpenAI's wire shapes (`cntr_…`, `cfile_…` under /mnt/data, cursor pages). Each API key is its own account:
// a container is found only with the key that created it, as on the real service.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { formParts } from './openai-files.ts';
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

interface StoredFile {
  object: {
    id: string;
    object: 'container.file';
    container_id: string;
    path: string;
    bytes: number;
    created_at: number;
    source: string;
  };
  content: Buffer;
}

interface ProviderFile {
  filename: string;
  content: Buffer;
  /** The key that uploaded it; unset: any key sees it. */
  account?: string;
}

interface StoredContainer {
  account: string;
  object: Record<string, unknown> & { id: string; created_at: number };
  files: Map<string, StoredFile>;
}

export interface ContainersFake extends FakeServer {
  containers: Map<string, StoredContainer>;
  /** Files of the provider's Files API that `file_id` may copy in (only with their account's key when set). */
  providerFiles: Map<string, ProviderFile>;
  /** The key (bearer or api-key) a request carried. */
  keyOf(req: RecordedRequest): string;
}

const now = () => Math.floor(Date.now() / 1000);
const hex = (n: number) => randomBytes(n).toString('hex');

function notFound(res: ServerResponse, what: string): void {
  sendJson(res, 404, {
    error: { message: `No ${what} found`, type: 'invalid_request_error', param: null, code: null },
  });
}

function page(res: ServerResponse, items: { id: string; created_at: number }[], url: URL): void {
  const order = url.searchParams.get('order') === 'asc' ? 1 : -1;
  const sorted = [...items].sort((a, b) => order * (a.created_at - b.created_at));
  const after = url.searchParams.get('after');
  const from = after ? sorted.findIndex((i) => i.id === after) + 1 : 0;
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const data = sorted.slice(from, from + limit);
  sendJson(res, 200, {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: from + limit < sorted.length,
  });
}

export function createOpenAIContainersFake(prefix = '/v1'): ContainersFake {
  const containers = new Map<string, StoredContainer>();
  const providerFiles = new Map<string, ProviderFile>();
  const providerFile = (req: RecordedRequest, id: string) => {
    const f = providerFiles.get(id);
    return f && (f.account === undefined || f.account === keyOf(req)) ? f : undefined;
  };
  const keyOf = (req: RecordedRequest) =>
    String(req.headers['api-key'] ?? String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
  const p = (s: string) => new RegExp(`^${prefix.replaceAll('/', '\\/')}/containers${s}$`);
  const seg = (req: RecordedRequest, n: number) =>
    decodeURIComponent(req.path.slice(prefix.length).split('/')[n] ?? '');
  /** The container the path names, when the request's key owns it. */
  const owned = (req: RecordedRequest) => {
    const c = containers.get(seg(req, 2));
    return c && c.account === keyOf(req) ? c : undefined;
  };
  const storeFile = (c: StoredContainer, filename: string, content: Buffer, source: string): StoredFile => {
    const f: StoredFile = {
      object: {
        id: `cfile_${hex(16)}`,
        object: 'container.file',
        container_id: c.object.id,
        path: `/mnt/data/${filename}`,
        bytes: content.length,
        created_at: now(),
        source,
      },
      content,
    };
    c.files.set(f.object.id, f);
    return f;
  };
  const fileRoute = (
    method: string,
    tail: string,
    handle: (f: StoredFile, c: StoredContainer, res: ServerResponse) => void,
  ) => ({
    method,
    path: p(`/[^/]+/files/[^/]+${tail}`),
    handler: (req: RecordedRequest, res: ServerResponse) => {
      const c = owned(req);
      const f = c?.files.get(seg(req, 4));
      if (!c || !f) return notFound(res, 'container file');
      handle(f, c, res);
    },
  });
  const fake = new FakeServer([
    {
      // OpenAI's own file upload (the Files API), so that a container can copy in a file uploaded through the gateway.
      method: 'POST',
      path: new RegExp(`^${prefix.replaceAll('/', '\\/')}/files$`),
      handler: (req, res) => {
        const form = formParts(req);
        if (!form.file) return notFound(res, 'file part');
        const id = `file-${hex(12)}`;
        providerFiles.set(id, { filename: form.file.filename, content: form.file.data, account: keyOf(req) });
        sendJson(res, 200, {
          id,
          object: 'file',
          bytes: form.file.data.length,
          created_at: now(),
          filename: form.file.filename,
          purpose: form.fields['purpose'] ?? 'user_data',
          status: 'processed',
        });
      },
    },
    {
      method: 'POST',
      path: p(''),
      handler: (req, res) => {
        const b = (req.json ?? {}) as Record<string, unknown>;
        if (typeof b['name'] !== 'string') {
          sendJson(res, 400, {
            error: { message: "Missing required parameter: 'name'.", type: 'invalid_request_error' },
          });
          return;
        }
        const id = `cntr_${hex(24)}`;
        const c: StoredContainer = {
          account: keyOf(req),
          object: {
            id,
            object: 'container',
            created_at: now(),
            status: 'running',
            expires_after: b['expires_after'] ?? { anchor: 'last_active_at', minutes: 20 },
            last_active_at: now(),
            memory_limit: b['memory_limit'] ?? '1g',
            name: b['name'],
          },
          files: new Map(),
        };
        const copied = ((b['file_ids'] as string[] | undefined) ?? []).map((fid) => providerFile(req, fid));
        if (copied.some((f) => f === undefined)) return notFound(res, 'file');
        for (const pf of copied) storeFile(c, pf!.filename, pf!.content, 'user');
        containers.set(id, c);
        sendJson(res, 200, c.object);
      },
    },
    {
      method: 'GET',
      path: p(''),
      handler: (req, res) => {
        const url = new URL(req.url, 'http://fake');
        const name = url.searchParams.get('name');
        const mine = [...containers.values()].filter(
          (c) => c.account === keyOf(req) && (name === null || c.object['name'] === name),
        );
        page(
          res,
          mine.map((c) => c.object),
          url,
        );
      },
    },
    {
      method: 'GET',
      path: p('/[^/]+'),
      handler: (req, res) => {
        const c = owned(req);
        if (c) sendJson(res, 200, c.object);
        else notFound(res, 'container');
      },
    },
    {
      method: 'DELETE',
      path: p('/[^/]+'),
      handler: (req, res) => {
        const c = owned(req);
        if (!c) return notFound(res, 'container');
        containers.delete(c.object.id);
        sendJson(res, 200, { id: c.object.id, object: 'container.deleted', deleted: true });
      },
    },
    {
      method: 'POST',
      path: p('/[^/]+/files'),
      handler: (req, res) => {
        const c = owned(req);
        if (!c) return notFound(res, 'container');
        if (String(req.headers['content-type']).startsWith('multipart/form-data')) {
          const form = formParts(req);
          if (!form.file) {
            sendJson(res, 400, {
              error: { message: "Missing required parameter: 'file'.", type: 'invalid_request_error' },
            });
            return;
          }
          sendJson(res, 200, storeFile(c, form.file.filename, form.file.data, 'user').object);
          return;
        }
        const fid = String((req.json as Record<string, unknown> | undefined)?.['file_id'] ?? '');
        const pf = providerFile(req, fid);
        if (!pf) return notFound(res, 'file');
        sendJson(res, 200, storeFile(c, pf.filename, pf.content, 'user').object);
      },
    },
    {
      method: 'GET',
      path: p('/[^/]+/files'),
      handler: (req, res) => {
        const c = owned(req);
        if (!c) return notFound(res, 'container');
        page(
          res,
          [...c.files.values()].map((f) => f.object),
          new URL(req.url, 'http://fake'),
        );
      },
    },
    fileRoute('GET', '', (f, _c, res) => sendJson(res, 200, f.object)),
    fileRoute('DELETE', '', (f, c, res) => {
      c.files.delete(f.object.id);
      sendJson(res, 200, { id: f.object.id, object: 'container.file.deleted', deleted: true });
    }),
    fileRoute('GET', '/content', (f, _c, res) => {
      // Sent in two writes without a declared length: the gateway must pass the bytes on as they come.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const half = Math.floor(f.content.length / 2);
      res.write(f.content.subarray(0, half));
      setTimeout(() => res.end(f.content.subarray(half)), 20);
    }),
  ]);
  return Object.assign(fake, { containers, providerFiles, keyOf });
}
