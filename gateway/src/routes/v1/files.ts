// `/v1/files`: upload (streamed through to the provider within the gateway's bound, never held whole), list,
// retrieve, delete and content, in OpenAI's shapes whatever provider holds the file. The provider is named by
// the `provider` query parameter or form field or the `x-model-provider` header (engine/resource-provider.ts).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type BatchInputScan, batchInputRef, scanBatchInput } from '../../engine/batch-input-scan.ts';
import { type ByIdOp, byIdCall, kindById, type ResourceKind } from '../../engine/resource-by-id.ts';
import { callerGone, type ResourceCall, runResourceCall } from '../../engine/resource-call.ts';
import { ownedListCall } from '../../engine/resource-list.ts';
import { type ProviderSources, resolveProvider } from '../../engine/resource-provider.ts';
import { GatewayError } from '../../http/errors.ts';
import { registerUploadRoute } from '../../http/multipart.ts';
import { StreamedForm } from '../../http/multipart-stream.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RequestError } from '../../http/request-error.ts';
import { BinaryBody } from '../../providers/shared/binary.ts';
import type { FileCalls } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import {
  FileDeleted,
  type FileExpiry,
  FileList,
  FileObject,
  FilePurpose,
  type FileUpload,
  type UploadFields,
} from '../../schemas/files.ts';

const ProviderQuery = z.object({
  provider: z.string().optional().meta({ description: 'The provider (or the x-model-provider header)' }),
});
const ListQuery = ProviderQuery.extend({
  purpose: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
  after: z.string().max(512).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});
const FileParams = z.object({ file_id: z.string().min(1).max(512) });
const UploadForm = z.object({
  file: z.string().meta({ format: 'binary' }),
  purpose: FilePurpose,
  provider: z.string().optional(),
  'expires_after[anchor]': z.literal('created_at').optional(),
  'expires_after[seconds]': z.string().optional(),
});

const tags = ['Files'];
const doc = (d: Omit<RouteDoc, 'tags' | 'errors'>, errors = [403, 413]): RouteDoc => ({ ...d, tags, errors });

export function registerFileRoutes(app: FastifyInstance, rt: Runtime): void {
  registerUploadRoute(app, {
    method: 'POST',
    url: '/files',
    config: {
      openapi: doc(
        {
          operationId: 'uploadFile',
          summary: 'Upload a file (streamed through to the provider)',
          querystring: ProviderQuery,
          body: UploadForm,
          bodyType: 'multipart/form-data',
          responses: { 200: { description: 'The file object (OpenAI shape)', json: FileObject } },
          // Admitted like inference: a spent budget is 402, a request rate limit 429. A virtual key's Gemini batch
          // input naming a file it does not own is 404; its owner records unreadable, 503.
        },
        [402, 403, 404, 413, 429, 503],
      ),
    },
    handler: (request, reply) => upload(rt, request, reply),
  });
  app.get(
    '/files',
    {
      config: {
        openapi: doc({
          operationId: 'listFiles',
          summary: 'List files',
          querystring: ListQuery,
          responses: { 200: { description: 'A page of file objects', json: FileList } },
        }),
      },
    },
    async (request, reply) => {
      const q = parse(ListQuery, request.query);
      const list = { requestType: 'file_list', label: 'listing files', method: (f: FileCalls) => f.list };
      return answer(rt, request, reply, {}, ownedListCall(rt, request.principal, FILE, list, q));
    },
  );
  const byId = (operationId: string, summary: string, json: z.ZodType) =>
    doc({
      operationId,
      summary,
      params: FileParams,
      querystring: ProviderQuery,
      responses: { 200: { description: summary, json } },
    });
  app.get(
    '/files/:file_id',
    { config: { openapi: byId('retrieveFile', 'Retrieve a file object', FileObject) } },
    answerById(rt, FILE, { requestType: 'file_retrieve', label: 'retrieving files', method: (f) => f.retrieve }),
  );
  app.delete(
    '/files/:file_id',
    { config: { openapi: byId('deleteFile', 'Delete a file', FileDeleted) } },
    answerById(rt, FILE, {
      requestType: 'file_delete',
      label: 'deleting files',
      method: (f) => f.delete,
      deletes: true,
    }),
  );
  app.get(
    '/files/:file_id/content',
    {
      config: {
        openapi: doc({
          operationId: 'getFileContent',
          summary: "Download a file's content",
          params: FileParams,
          querystring: ProviderQuery,
          responses: { 200: { description: 'The bytes, streamed', text: 'application/octet-stream' } },
        }),
      },
    },
    answerById(rt, FILE, { requestType: 'file_content', label: 'file content', method: (f) => f.content }),
  );
}

/** A file, as the routes on one file address it. */
const FILE = kindById(
  'file',
  (a) => a.files,
  (params) => parse(FileParams, params).file_id,
);

export function parse<T>(schema: z.ZodType<T>, v: unknown): T {
  const r = schema.safeParse(v ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = issue?.path.join('.') || undefined;
  throw new GatewayError(
    'invalid_request',
    `${param ?? 'request'}: ${issue?.message ?? 'invalid'}`,
    param ? { param } : {},
  );
}

/** Where, besides the query and the headers, a request names its provider. */
type Named = Pick<ProviderSources, 'field' | 'model'>;

/** Runs the call against the named provider and answers: JSON with `extra_fields`, or bytes as they arrive. */
export async function answer<T>(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  named: Named,
  c: ResourceCall<T>,
): Promise<unknown> {
  const startedAt = rt.now();
  let chosen: string;
  try {
    const query = request.query as Record<string, unknown>;
    chosen = resolveProvider(rt, { query, headers: request.headers, ...named });
  } catch (err) {
    throw new RequestError(err, { request_type: c.requestType });
  }
  const r = await runResourceCall(rt, request, chosen, c, callerGone(reply), startedAt);
  reply.header('x-gateway-request-id', request.id);
  if (r.rateHeaders) reply.headers(r.rateHeaders);
  if (r.value instanceof BinaryBody) {
    reply.headers(r.value.headers).type(r.value.contentType);
    return reply.send(Readable.from(r.value.body, { objectMode: false }));
  }
  return { ...(r.value as object), extra_fields: r.extra };
}

/**
 * A route on one resource that the path names: `op`'s call on it (the owner checked, a bad id a 400), answered
 * as `answer` does. `named` gives where else the request names its provider (a format's own provider).
 */
export function answerById<C, P, A extends unknown[], T>(
  rt: Runtime,
  kind: ResourceKind<C, P, A>,
  op: ByIdOp<C, A, T>,
  named: (request: FastifyRequest) => Named = () => ({}),
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return (request, reply) => {
    const c = byIdCall(kind, op, request);
    return answer(rt, request, reply, named(request), c);
  };
}

/** POST /files: the form's parts are read as they arrive; the file part is streamed to the provider. */
async function upload(rt: Runtime, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const requestType = 'file_upload';
  const fail = (err: unknown) => new RequestError(err, { request_type: requestType });
  if (!request.isMultipart()) {
    throw fail(
      new GatewayError('unsupported_media_type', 'upload the file as multipart/form-data (fields file and purpose)'),
    );
  }
  const form = await StreamedForm.open(request, rt.state.snapshot.client.max_file_upload_size_mb).catch(
    (err: unknown) => {
      throw fail(err);
    },
  );
  const file = form.file;
  if (!file)
    throw fail(
      new GatewayError('invalid_request', 'file: required (a multipart part named "file")', { param: 'file' }),
    );
  // An early 4xx leaves the rest of the body unread: the connection then closes.
  reply.header('connection', 'close');
  let uploaded: UploadFields | undefined;
  const up: FileUpload = {
    filename: file.filename,
    mimetype: file.mimetype,
    // Fields after the file (the openai SDK sends `purpose` there) are read before the upload completes.
    data: form.bytes((fields) => {
      uploaded = uploadFields(fields);
    }),
    fields: () => {
      if (!uploaded) throw new GatewayError('invalid_request', 'the form was not read to its end');
      return uploaded;
    },
  };
  let scan: BatchInputScan | undefined;
  const c: ResourceCall<unknown> = {
    requestType,
    label: 'file uploads',
    idempotent: false,
    admit: true,
    created: (v) => ({ kind: 'file', id: (v as { id: string }).id }),
    createdRows: (v) => (scan?.passed() ? [batchInputRef((v as { id: string }).id)] : []),
    method: (a) => {
      const fn = a.files?.upload;
      if (!fn) return undefined;
      return async (ctx) => {
        // A virtual key's Gemini batch input has its lines checked on the way (engine/batch-input-scan.ts).
        scan = scanBatchInput(rt, request.principal, a, ctx, up);
        try {
          return await fn.call(a.files, scan?.upload ?? up, ctx);
        } catch (err) {
          // The caller's form failed (too large, no purpose): that is the answer, not the aborted upstream call.
          throw form.failure ?? err;
        }
      };
    },
  };
  try {
    const sent = await answer(rt, request, reply, { field: form.fields.get('provider') }, c);
    reply.removeHeader('connection');
    return sent;
  } finally {
    form.release();
  }
}

function uploadFields(fields: Map<string, string>): UploadFields {
  const purpose = fields.get('purpose');
  if (purpose === undefined) throw new GatewayError('invalid_request', 'purpose: required', { param: 'purpose' });
  const p = FilePurpose.safeParse(purpose);
  if (!p.success) {
    throw new GatewayError('invalid_request', `purpose: one of ${FilePurpose.options.join(', ')}`, {
      param: 'purpose',
    });
  }
  const out: UploadFields = { purpose: p.data };
  const anchor = fields.get('expires_after[anchor]');
  const seconds = fields.get('expires_after[seconds]');
  if (anchor !== undefined || seconds !== undefined) {
    const s = Number(seconds);
    if (anchor !== 'created_at' || !Number.isInteger(s) || s < 3600 || s > 2_592_000) {
      throw new GatewayError(
        'invalid_request',
        'expires_after: anchor "created_at" and seconds between 3600 and 2592000',
        { param: 'expires_after' },
      );
    }
    const expiry: FileExpiry = { anchor: 'created_at', seconds: s };
    out.expires_after = expiry;
  }
  return out;
}
