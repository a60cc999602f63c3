// A fake of OpenAI's Files and Batches APIs (also Azure OpenAI's v1 API under `/openai/v1`): uploads read as
// multipart, file objects, content, batches that complete with an output JSONL file carrying usage.
import { randomUUID } from 'node:crypto';
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

interface StoredFile {
  object: {
    id: string;
    object: 'file';
    bytes: number;
    created_at: number;
    filename: string;
    purpose: string;
    status: string;
  };
  content: Buffer;
}

export interface OpenAIFilesFake extends FakeServer {
  files: Map<string, StoredFile>;
  batches: Map<string, Record<string, unknown>>;
  /** Marks a batch completed with an output file: one line per input line, each with this usage. */
  complete(batchId: string, usage: { prompt_tokens: number; completion_tokens: number }): void;
}

/** The part named `name` of a multipart body (text), and the file part's name and bytes. */
export function formParts(req: RecordedRequest): {
  fields: Record<string, string>;
  file?: { filename: string; data: Buffer };
} {
  const type = String(req.headers['content-type'] ?? '');
  const boundary = /boundary=(.+)$/.exec(type)?.[1];
  const out: { fields: Record<string, string>; file?: { filename: string; data: Buffer } } = { fields: {} };
  if (!boundary) return out;
  const text = req.body.toString('latin1');
  for (const raw of text.split(`--${boundary}`)) {
    const sep = raw.indexOf('\r\n\r\n');
    if (sep < 0) continue;
    const head = raw.slice(0, sep);
    const value = raw.slice(sep + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/.exec(head)?.[1];
    if (!name) continue;
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (filename !== undefined) out.file = { filename, data: Buffer.from(value, 'latin1') };
    else out.fields[name] = value;
  }
  return out;
}

export function createOpenAIFilesFake(prefix = '/v1'): OpenAIFilesFake {
  const files = new Map<string, StoredFile>();
  const batches = new Map<string, Record<string, unknown>>();
  const p = (s: string) => new RegExp(`^${prefix.replaceAll('/', '\\/')}${s}$`);
  const now = () => Math.floor(Date.now() / 1000);
  const store = (filename: string, purpose: string, content: Buffer): StoredFile => {
    const f: StoredFile = {
      object: {
        id: `file-${randomUUID().slice(0, 12)}`,
        object: 'file',
        bytes: content.length,
        created_at: now(),
        filename,
        purpose,
        status: 'processed',
      },
      content,
    };
    files.set(f.object.id, f);
    return f;
  };
  const fileOf = (req: RecordedRequest) =>
    files.get(decodeURIComponent(req.path.split('/')[prefix.split('/').length + 1] ?? ''));
  const notFound = (res: Parameters<typeof sendJson>[0]) =>
    sendJson(res, 404, { error: { message: 'No such File object', type: 'invalid_request_error', code: null } });
  const fake = new FakeServer([
    {
      method: 'POST',
      path: p('/files'),
      handler: (req, res) => {
        const form = formParts(req);
        if (!form.file || !form.fields['purpose']) {
          sendJson(res, 400, { error: { message: 'file and purpose required', type: 'invalid_request_error' } });
          return;
        }
        sendJson(res, 200, store(form.file.filename, form.fields['purpose'], form.file.data).object);
      },
    },
    {
      method: 'GET',
      path: p('/files'),
      handler: (_req, res) =>
        sendJson(res, 200, { object: 'list', data: [...files.values()].map((f) => f.object), has_more: false }),
    },
    {
      method: 'GET',
      path: p('/files/[^/]+'),
      handler: (req, res) => {
        const f = fileOf(req);
        if (f) sendJson(res, 200, f.object);
        else notFound(res);
      },
    },
    {
      method: 'DELETE',
      path: p('/files/[^/]+'),
      handler: (req, res) => {
        const f = fileOf(req);
        if (!f) return notFound(res);
        files.delete(f.object.id);
        sendJson(res, 200, { id: f.object.id, object: 'file', deleted: true });
      },
    },
    {
      method: 'GET',
      path: p('/files/[^/]+/content'),
      handler: (req, res) => {
        const f = fileOf(req);
        if (!f) return notFound(res);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(f.content.length) });
        res.end(f.content);
      },
    },
    {
      method: 'POST',
      path: p('/batches'),
      handler: (req, res) => {
        const b = req.json as Record<string, unknown>;
        if (!files.has(String(b['input_file_id']))) return notFound(res);
        const batch = {
          id: `batch_${randomUUID().slice(0, 12)}`,
          object: 'batch',
          endpoint: b['endpoint'],
          input_file_id: b['input_file_id'],
          completion_window: b['completion_window'],
          status: 'validating',
          output_file_id: null,
          error_file_id: null,
          created_at: now(),
          request_counts: { total: 0, completed: 0, failed: 0 },
          metadata: b['metadata'] ?? null,
        };
        batches.set(batch.id, batch);
        sendJson(res, 200, batch);
      },
    },
    {
      method: 'GET',
      path: p('/batches'),
      handler: (_req, res) => sendJson(res, 200, { object: 'list', data: [...batches.values()], has_more: false }),
    },
    {
      method: 'GET',
      path: p('/batches/[^/]+'),
      handler: (req, res) => {
        const b = batches.get(decodeURIComponent(req.path.split('/').at(-1) ?? ''));
        if (b) sendJson(res, 200, b);
        else sendJson(res, 404, { error: { message: 'No such batch', type: 'invalid_request_error' } });
      },
    },
    {
      method: 'POST',
      path: p('/batches/[^/]+/cancel'),
      handler: (req, res) => {
        const b = batches.get(decodeURIComponent(req.path.split('/').at(-2) ?? ''));
        if (!b) return sendJson(res, 404, { error: { message: 'No such batch', type: 'invalid_request_error' } });
        b['status'] = 'cancelling';
        sendJson(res, 200, b);
      },
    },
  ]);
  return Object.assign(fake, {
    files,
    batches,
    complete(batchId: string, usage: { prompt_tokens: number; completion_tokens: number }) {
      const b = batches.get(batchId);
      if (!b) throw new Error(`no batch ${batchId}`);
      const input = files.get(String(b['input_file_id']))?.content.toString('utf8') ?? '';
      const lines = input
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const r = JSON.parse(l) as { custom_id: string; body: { model: string } };
          return JSON.stringify({
            id: `batch_req_${r.custom_id}`,
            custom_id: r.custom_id,
            response: {
              status_code: 200,
              request_id: `req_${r.custom_id}`,
              body: {
                object: 'chat.completion',
                model: r.body.model,
                choices: [
                  { index: 0, message: { role: 'assistant', content: `done ${r.custom_id}` }, finish_reason: 'stop' },
                ],
                usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
              },
            },
            error: null,
          });
        });
      const out = store('batch_output.jsonl', 'batch_output', Buffer.from(`${lines.join('\n')}\n`));
      Object.assign(b, {
        status: 'completed',
        output_file_id: out.object.id,
        request_counts: { total: lines.length, completed: lines.length, failed: 0 },
      });
    },
  });
}
