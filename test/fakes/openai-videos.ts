// Fake Sora upstream: OpenAI's `/v1/videos` jobs as OpenAI serves them (create from a multipart form, retrieve,
// list with cursors, delete, remix, content download by variant), also under Azure's `/openai/v1` root. A job
// moves queued -> in_progress -> completed one retrieve at a time, so a client polls as it would for real.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

interface Job {
  id: string;
  object: 'video';
  model: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  prompt: string;
  seconds: string;
  size: string;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  remixed_from_video_id: string | null;
  error: null;
}

/** The bytes the fake serves as a video: an MP4 `ftyp` box and a deterministic tail. */
export function fakeVideoBytes(id: string, variant = 'video'): Buffer {
  const head = Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32]);
  return Buffer.concat([head, Buffer.from(`${variant}:${id}:`.repeat(64))]);
}

const CONTENT_TYPES: Record<string, string> = {
  video: 'video/mp4',
  thumbnail: 'image/webp',
  spritesheet: 'image/jpeg',
};

export type VideoFake = FakeServer & {
  jobs: Map<string, Job>;
  /** The last create's form: its text fields and files (name, type, size). */
  lastForm: () => Promise<FormData>;
};

export function createOpenAIVideosFake(): VideoFake {
  const jobs = new Map<string, Job>();
  let counter = 0;
  const id = (): string => `video_${(++counter).toString(16).padStart(24, '0')}`;
  const now = (): number => Math.floor(Date.now() / 1000);
  const notFound = (res: ServerResponse, vid: string) =>
    sendJson(res, 404, {
      error: { message: `Video with id '${vid}' not found.`, type: 'invalid_request_error', param: null, code: null },
    });
  const job = (req: RecordedRequest): string => decodeURIComponent(/\/videos\/([^/]+)/.exec(req.path)?.[1] ?? '');
  const fake = new FakeServer([
    {
      method: 'POST',
      path: /\/videos$/,
      handler: async (req, res) => {
        const form = await formOf(req);
        const model = String(form.get('model') ?? 'sora-2');
        const prompt = form.get('prompt');
        if (typeof prompt !== 'string' || prompt === '') {
          sendJson(res, 400, {
            error: { message: "Missing required parameter: 'prompt'.", type: 'invalid_request_error', param: 'prompt' },
          });
          return;
        }
        const j: Job = {
          id: id(),
          object: 'video',
          model,
          status: 'queued',
          progress: 0,
          prompt,
          seconds: String(form.get('seconds') ?? '4'),
          size: String(form.get('size') ?? '720x1280'),
          created_at: now(),
          completed_at: null,
          expires_at: null,
          remixed_from_video_id: null,
          error: null,
        };
        jobs.set(j.id, j);
        sendJson(res, 200, j);
      },
    },
    {
      method: 'POST',
      path: /\/videos\/[^/]+\/remix$/,
      handler: (req, res) => {
        const src = jobs.get(job(req));
        if (!src) return notFound(res, job(req));
        const body = (req.json ?? {}) as { prompt?: string };
        const j: Job = {
          ...src,
          id: id(),
          status: 'queued',
          progress: 0,
          prompt: body.prompt ?? '',
          created_at: now(),
          completed_at: null,
          remixed_from_video_id: src.id,
        };
        jobs.set(j.id, j);
        sendJson(res, 200, j);
      },
    },
    {
      method: 'GET',
      path: /\/videos\/[^/]+\/content$/,
      handler: (req, res) => {
        const j = jobs.get(job(req));
        if (!j) return notFound(res, job(req));
        if (j.status !== 'completed') {
          sendJson(res, 400, {
            error: { message: 'Video is not ready yet.', type: 'invalid_request_error', code: 'video_not_ready' },
          });
          return;
        }
        const variant = new URL(req.url, 'http://fake').searchParams.get('variant') ?? 'video';
        const bytes = fakeVideoBytes(j.id, variant);
        res.writeHead(200, {
          'content-type': CONTENT_TYPES[variant] ?? 'application/octet-stream',
          'content-length': bytes.length,
        });
        res.end(bytes);
      },
    },
    {
      method: 'GET',
      path: /\/videos\/[^/]+$/,
      handler: (req, res) => {
        const j = jobs.get(job(req));
        if (!j) return notFound(res, job(req));
        if (j.status === 'queued') Object.assign(j, { status: 'in_progress', progress: 50 });
        else if (j.status === 'in_progress')
          Object.assign(j, { status: 'completed', progress: 100, completed_at: now() });
        sendJson(res, 200, j);
      },
    },
    {
      method: 'DELETE',
      path: /\/videos\/[^/]+$/,
      handler: (req, res) => {
        const vid = job(req);
        if (!jobs.delete(vid)) return notFound(res, vid);
        sendJson(res, 200, { id: vid, object: 'video.deleted', deleted: true });
      },
    },
    {
      method: 'GET',
      path: /\/videos$/,
      handler: (req, res) => {
        const q = new URL(req.url, 'http://fake').searchParams;
        const all = [...jobs.values()].sort((a, b) => a.id.localeCompare(b.id));
        if (q.get('order') !== 'asc') all.reverse();
        const after = q.get('after');
        const start = after ? all.findIndex((j) => j.id === after) + 1 : 0;
        const limit = Number(q.get('limit') ?? '20');
        const page = all.slice(start, start + limit);
        sendJson(res, 200, {
          object: 'list',
          data: page,
          first_id: page[0]?.id ?? null,
          last_id: page.at(-1)?.id ?? null,
          has_more: start + limit < all.length,
        });
      },
    },
  ]);
  const lastForm = async () => {
    const create = fake.requests.findLast((r) => r.method === 'POST' && /\/videos$/.test(r.path));
    if (!create) throw new Error('no create request');
    return formOf(create);
  };
  return Object.assign(fake, { jobs, lastForm });
}

/** The request's multipart form (or its JSON body as one), read with the platform's own parser. */
async function formOf(req: RecordedRequest): Promise<FormData> {
  const type = String(req.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) {
    return new Request('http://fake/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: req.body,
    }).formData();
  }
  const form = new FormData();
  for (const [k, v] of Object.entries((req.json ?? {}) as Record<string, unknown>)) form.append(k, String(v));
  return form;
}
