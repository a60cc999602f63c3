// `/genai` Files API in Google's own wire shapes, so `@google/genai`'s `files.*` works against the gateway:
// `POST /upload/{v}/files` (genai-upload.ts), `GET /{v}/files`, `GET|DELETE /{v}/files/{id}`. The calls are the
// model-less calls `/v1/files` makes (engine/resource-call.ts): the same owner records, so a virtual key lists
// and reaches only its own files (another's is a 404 in Google's error shape), the same key choice and logs.
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { byIdCall, kindById } from '../../engine/resource-by-id.ts';
import { callerGone, type ResourceCall, runResourceCall } from '../../engine/resource-call.ts';
import { ownedListCall } from '../../engine/resource-list.ts';
import { GOOGLE_ERROR_DOC } from '../../formats/genai/operations.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RequestError } from '../../http/request-error.ts';
import type { GenaiFileCalls, GoogleJson } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import { parse } from '../v1/files.ts';
import { genaiFileProvider } from './genai-file-provider.ts';
import { genaiUpload } from './genai-upload.ts';

const ProviderQuery = z.object({
  provider: z
    .string()
    .optional()
    .meta({ description: 'The provider (or the x-model-provider header); default gemini' }),
});
const ListQuery = ProviderQuery.extend({
  pageSize: z.coerce.number().int().min(1).max(100).optional(),
  pageToken: z.string().max(2048).optional(),
});
const FileParams = z.object({ file_id: z.string().min(1).max(512) });
const UploadQuery = ProviderQuery.extend({
  upload_id: z.string().optional().meta({ description: 'The session of a resumable upload (from X-Goog-Upload-URL)' }),
  upload_protocol: z.string().optional(),
});

const GeminiFile = z
  .object({
    name: z.string().meta({ description: 'files/{id}' }),
    displayName: z.string().optional(),
    mimeType: z.string().optional(),
    sizeBytes: z.string().optional(),
    createTime: z.string().optional(),
    updateTime: z.string().optional(),
    expirationTime: z.string().optional(),
    sha256Hash: z.string().optional(),
    uri: z.string().optional().meta({ description: 'What a fileData part names' }),
    state: z.string().optional(),
    source: z.string().optional(),
  })
  .meta({ id: 'GeminiFile' });
const UploadMetadata = z.object({
  file: z
    .object({ displayName: z.string().optional(), mimeType: z.string().optional(), name: z.string().optional() })
    .optional(),
});

const tags = ['Gemini API'];
const doc = (version: string, d: Omit<RouteDoc, 'tags' | 'errorBody' | 'operationId'> & { id: string }): RouteDoc => {
  const { id, ...rest } = d;
  return { ...rest, operationId: `${id}${version === 'v1' ? 'V1' : ''}`, tags, errorBody: GOOGLE_ERROR_DOC };
};

const calls = (a: { files?: { genai?: GenaiFileCalls } | undefined }) => a.files?.genai;
const FILE = kindById('file', calls, (params) => parse(FileParams, params).file_id);

export function registerGenaiFiles(f: FastifyInstance, rt: Runtime, version: string): void {
  // The upload reads its own body: JSON metadata, raw bytes of any declared type, or a multipart form.
  f.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(fastifyMultipart, { throwFileSizeLimit: true });
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.post(
      `/upload/${version}/files`,
      {
        config: {
          openapi: doc(version, {
            id: 'genaiUploadFile',
            summary: 'Upload a file, the Gemini API way (resumable, or one multipart form)',
            description:
              'Google’s resumable protocol: `X-Goog-Upload-Protocol: resumable` and `X-Goog-Upload-Command: start` with this JSON metadata answer an `X-Goog-Upload-URL` on the gateway (a session of one caller, one hour); the bytes go there with `X-Goog-Upload-Command: upload` / `upload, finalize` and `X-Goog-Upload-Offset`, and the last answers `{file}`. A multipart form of `metadata` (JSON, before the file) and `file` is one call. Admitted as `/v1/files` uploads are (402, 429); a virtual key’s JSON Lines batch input is checked on the way (404, 400).',
            querystring: UploadQuery,
            body: UploadMetadata,
            responses: {
              200: {
                description: '{file} after the last bytes; empty after start',
                json: z.object({ file: GeminiFile }),
              },
            },
            errors: [402, 404, 409, 413, 429, 503],
          }),
        },
      },
      (request, reply) => genaiUpload(rt, request, reply),
    );
  });
  f.get(
    `/${version}/files`,
    {
      config: {
        openapi: doc(version, {
          id: 'genaiListFiles',
          summary: 'List files, the Gemini API way (a virtual key sees its own)',
          querystring: ListQuery,
          responses: {
            200: {
              description: 'A page of files',
              json: z.object({ files: z.array(GeminiFile), nextPageToken: z.string().optional() }),
            },
          },
        }),
      },
    },
    async (request, reply) => {
      const q = listQuery(request);
      const list = { requestType: 'file_list', label: 'listing files', method: (g: GenaiFileCalls) => g.list };
      const page = await answer(rt, request, reply, ownedListCall(rt, request.principal, FILE, list, q));
      const out: GoogleJson = { files: page.data.map((d) => d.file) };
      if (page.next_page_token) out['nextPageToken'] = page.next_page_token;
      return out;
    },
  );
  const byId = (id: string, summary: string, json: z.ZodType) =>
    doc(version, {
      id,
      summary,
      params: FileParams,
      querystring: ProviderQuery,
      responses: { 200: { description: summary, json } },
    });
  f.get(
    `/${version}/files/:file_id`,
    { config: { openapi: byId('genaiGetFile', 'A file, the Gemini API way', GeminiFile) } },
    (request, reply) =>
      answer(
        rt,
        request,
        reply,
        byIdCall(FILE, { requestType: 'file_retrieve', label: 'retrieving files', method: (g) => g.get }, request),
      ),
  );
  f.delete(
    `/${version}/files/:file_id`,
    { config: { openapi: byId('genaiDeleteFile', 'Delete a file, the Gemini API way', z.object({})) } },
    (request, reply) =>
      answer(
        rt,
        request,
        reply,
        byIdCall(
          FILE,
          { requestType: 'file_delete', label: 'deleting files', method: (g) => g.delete, deletes: true },
          request,
        ),
      ),
  );
}

function listQuery(request: FastifyRequest): { limit?: number | undefined; after?: string | undefined } {
  try {
    const q = parse(ListQuery, request.query);
    return { limit: q.pageSize, after: q.pageToken };
  } catch (err) {
    throw new RequestError(err, { request_type: 'file_list' });
  }
}

/** Runs the call against the request's provider; Google's answer as it is. */
async function answer<T>(rt: Runtime, request: FastifyRequest, reply: FastifyReply, c: ResourceCall<T>): Promise<T> {
  let provider: string;
  try {
    provider = genaiFileProvider(rt, request);
  } catch (err) {
    throw new RequestError(err, { request_type: c.requestType });
  }
  const r = await runResourceCall(rt, request, provider, c, callerGone(reply));
  reply.header('x-gateway-request-id', request.id);
  if (r.rateHeaders) reply.headers(r.rateHeaders);
  return r.value;
}
