// `/v1/containers…` (OpenAI's code-interpreter containers and their files): model-less calls
// (engine/resource-call.ts) to the provider the request names, sent with the key that created the container.
// A file upload is streamed through within client.max_file_upload_size_mb, never held whole.
import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceCall, ResourceRef } from '../../engine/resource-call.ts';
import {
  CONTAINER_DOCS,
  containerParams,
  createBody,
  fileIdBody,
  fileParams,
  listQuery,
  providerField,
} from '../../formats/openai/containers.ts';
import type { WireFormat } from '../../formats/types.ts';
import { GatewayError } from '../../http/errors.ts';
import { RequestError } from '../../http/request-error.ts';
import type { CallContext, ContainerCalls } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { ContainerFileSource } from '../../schemas/containers.ts';
import { answer } from './files.ts';

const MB = 1024 * 1024;
/** Room for the form's framing and text fields beside the file, in a declared content-length. */
const FORM_OVERHEAD_BYTES = MB;

type Choose<T> = (c: ContainerCalls) => ((ctx: CallContext) => Promise<T>) | undefined;

/** The container calls' method, or undefined when the provider has no containers or not this call. */
function method<T>(pick: Choose<T>): ResourceCall<T>['method'] {
  return (a) => (a.containers ? pick(a.containers) : undefined);
}

const container = (id: string): ResourceRef => ({ kind: 'container', id });

export function registerContainerRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  /** Runs a call against the provider the request names (the format's own when it names none). */
  const run = <T>(request: FastifyRequest, reply: FastifyReply, c: ResourceCall<T>, field?: string) =>
    answer(rt, request, reply, { field: providerField(format, request.query, request.headers, field) }, c);
  const read = <T>(requestType: string, label: string, pick: Choose<T>, target?: ResourceRef): ResourceCall<T> => ({
    requestType,
    label,
    idempotent: true,
    target,
    method: method(pick),
  });

  app.post('/containers', { config: { openapi: CONTAINER_DOCS.create } }, (request, reply) => {
    const { req, provider } = failing('container_create', () => createBody(request.body));
    const c: ResourceCall<{ id: string }> = {
      requestType: 'container_create',
      label: 'creating containers',
      idempotent: false,
      admit: true,
      // Files copied in must be in the container's account: the key that uploaded the first one goes first
      // (nothing is created on a 404, so the next key may be tried).
      target: req.file_ids?.[0] === undefined ? undefined : { kind: 'file', id: req.file_ids[0] },
      created: (v) => container(v.id),
      method: method((k) => k.create && ((ctx) => k.create!(req, ctx))),
    };
    return run(request, reply, c, provider);
  });
  app.get('/containers', { config: { openapi: CONTAINER_DOCS.list } }, (request, reply) => {
    const q = failing('container_list', () => listQuery(request.query));
    return run(
      request,
      reply,
      read('container_list', 'listing containers', (k) => k.list && ((ctx) => k.list!(q, ctx))),
    );
  });
  app.get('/containers/:container_id', { config: { openapi: CONTAINER_DOCS.retrieve } }, (request, reply) => {
    const id = failing('container_retrieve', () => containerParams(request.params).container_id);
    const pick: Choose<unknown> = (k) => k.retrieve && ((ctx) => k.retrieve!(id, ctx));
    return run(request, reply, read('container_retrieve', 'retrieving containers', pick, container(id)));
  });
  app.delete('/containers/:container_id', { config: { openapi: CONTAINER_DOCS.delete } }, (request, reply) => {
    const id = failing('container_delete', () => containerParams(request.params).container_id);
    const pick: Choose<unknown> = (k) => k.delete && ((ctx) => k.delete!(id, ctx));
    return run(request, reply, read('container_delete', 'deleting containers', pick, container(id)));
  });

  app.post(
    '/containers/:container_id/files',
    { config: { multipart: true, openapi: CONTAINER_DOCS.createFile } },
    (request, reply) => createFile(rt, request, reply, format),
  );
  app.get('/containers/:container_id/files', { config: { openapi: CONTAINER_DOCS.listFiles } }, (request, reply) => {
    const { cid, q } = failing('container_file_list', () => ({
      cid: containerParams(request.params).container_id,
      q: listQuery(request.query),
    }));
    const pick: Choose<unknown> = (k) => k.listFiles && ((ctx) => k.listFiles!(cid, q, ctx));
    return run(request, reply, read('container_file_list', 'listing container files', pick, container(cid)));
  });
  const byFile =
    (
      requestType: string,
      label: string,
      pick: (k: ContainerCalls, cid: string, fid: string) => ((ctx: CallContext) => Promise<unknown>) | undefined,
    ) =>
    (request: FastifyRequest, reply: FastifyReply) => {
      const p = failing(requestType, () => fileParams(request.params));
      const c = read(requestType, label, (k) => pick(k, p.container_id, p.file_id), container(p.container_id));
      return run(request, reply, c);
    };
  app.get(
    '/containers/:container_id/files/:file_id',
    { config: { openapi: CONTAINER_DOCS.retrieveFile } },
    byFile(
      'container_file_retrieve',
      'retrieving container files',
      (k, cid, fid) => k.retrieveFile && ((ctx) => k.retrieveFile!(cid, fid, ctx)),
    ),
  );
  app.delete(
    '/containers/:container_id/files/:file_id',
    { config: { openapi: CONTAINER_DOCS.deleteFile } },
    byFile(
      'container_file_delete',
      'deleting container files',
      (k, cid, fid) => k.deleteFile && ((ctx) => k.deleteFile!(cid, fid, ctx)),
    ),
  );
  app.get(
    '/containers/:container_id/files/:file_id/content',
    { config: { openapi: CONTAINER_DOCS.fileContent } },
    byFile(
      'container_file_content',
      'container file content',
      (k, cid, fid) => k.fileContent && ((ctx) => k.fileContent!(cid, fid, ctx)),
    ),
  );
}

/** Runs `f`; a bad request becomes a RequestError carrying the call's type in its `extra_fields`. */
function failing<T>(requestType: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new RequestError(err, { request_type: requestType });
  }
}

/**
 * POST /containers/{id}/files: a JSON `file_id`, or a form whose `file` part is streamed upstream as it arrives
 * (text fields before and after it go along; `provider` only counts before the file, as on /v1/files).
 */
async function createFile(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  format: WireFormat,
): Promise<unknown> {
  const requestType = 'container_file_create';
  const fail = (err: unknown) => new RequestError(err, { request_type: requestType });
  const cid = failing(requestType, () => containerParams(request.params).container_id);
  /** `formFailure` is the caller's form error that ended a streamed upload: the answer, not the aborted call. */
  const send = (
    source: ContainerFileSource,
    field: string | undefined,
    formFailure?: () => GatewayError | undefined,
  ) => {
    let tried = false;
    const c: ResourceCall<unknown> = {
      requestType,
      label: 'creating container files',
      idempotent: false,
      admit: true,
      target: container(cid),
      method: method(
        (k) =>
          k.createFile &&
          (async (ctx) => {
            // A streamed upload cannot be sent to a second key after a 404 from the first.
            if (tried && formFailure) {
              throw new GatewayError(
                'not_found',
                `container ${cid} was not found under the key tried first, and an upload cannot be sent twice: ` +
                  'name the key that created it (x-gateway-key-name)',
              );
            }
            tried = true;
            try {
              return await k.createFile!(cid, source, ctx);
            } catch (err) {
              throw formFailure?.() ?? err;
            }
          }),
      ),
    };
    return answer(rt, request, reply, { field: providerField(format, request.query, request.headers, field) }, c);
  };
  if (!request.isMultipart()) {
    const { source, provider } = failing(requestType, () => fileIdBody(request.body));
    return send(source, provider);
  }
  const limit = rt.state.snapshot.client.max_file_upload_size_mb * MB;
  const tooLarge = () =>
    new GatewayError('payload_too_large', `the file is larger than ${limit / MB} MB (client.max_file_upload_size_mb)`, {
      headers: { connection: 'close' },
    });
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit + FORM_OVERHEAD_BYTES) throw fail(tooLarge());
  const form = request
    .parts({ limits: { fileSize: limit + 1, files: 1, fields: 16, fieldSize: 64 * 1024, parts: 17 } })
    [Symbol.asyncIterator]();
  const { fields, file } = await fieldsUntilFile(form, tooLarge).catch((err: unknown) => {
    throw fail(err);
  });
  const provider = fields.get('provider');
  fields.delete('provider');
  if (!file) {
    // A form without a file may name one of the provider's files instead, as the JSON body does.
    if (!fields.has('file_id')) {
      throw fail(
        new GatewayError('invalid_request', 'file: required (a multipart part named "file"), or file_id', {
          param: 'file',
        }),
      );
    }
    return send(failing(requestType, () => fileIdBody(Object.fromEntries(fields))).source, provider);
  }
  // An early 4xx leaves the rest of the body unread: the connection then closes.
  reply.header('connection', 'close');
  let failure: GatewayError | undefined;
  let complete = false;
  async function* data(): AsyncIterable<Uint8Array> {
    let bytes = 0;
    try {
      for await (const chunk of file!.file) {
        bytes += (chunk as Buffer).length;
        if (bytes > limit) throw tooLarge();
        yield chunk as Buffer;
      }
      await fieldsAfterFile(form, fields);
      complete = true;
    } catch (err) {
      failure = formError(err, tooLarge);
      throw failure;
    }
  }
  const source: ContainerFileSource = {
    kind: 'upload',
    filename: file.filename,
    mimetype: file.mimetype,
    data: data(),
    fields: () => {
      if (!complete) throw new GatewayError('invalid_request', 'the form was not read to its end');
      return fields;
    },
  };
  try {
    const sent = await send(source, provider, () => failure);
    reply.removeHeader('connection');
    return sent;
  } finally {
    if (!file.file.readableEnded) file.file.resume();
  }
}

/** The form's text fields up to its file part (which is left unread), or to its end. */
async function fieldsUntilFile(
  form: AsyncIterator<Multipart>,
  tooLarge: () => GatewayError,
): Promise<{ fields: Map<string, string>; file: MultipartFile | undefined }> {
  const fields = new Map<string, string>();
  try {
    for (let next = await form.next(); !next.done; next = await form.next()) {
      const part = next.value;
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw onlyFile(part.fieldname);
        return { fields, file: part };
      }
      fields.set(part.fieldname, String(part.value));
    }
  } catch (err) {
    throw formError(err, tooLarge);
  }
  return { fields, file: undefined };
}

async function fieldsAfterFile(form: AsyncIterator<Multipart>, fields: Map<string, string>): Promise<void> {
  for (let next = await form.next(); !next.done; next = await form.next()) {
    const part = next.value;
    if (part.type === 'file') throw onlyFile(part.fieldname);
    if (part.fieldname === 'provider' || part.fieldname === 'file_id') {
      throw new GatewayError('invalid_request', `form field ${part.fieldname} must come before the file`, {
        param: part.fieldname,
      });
    }
    fields.set(part.fieldname, String(part.value));
  }
}

function onlyFile(field: string): GatewayError {
  return new GatewayError('invalid_request', `form field ${field}: the form carries one file, in the field "file"`, {
    param: field,
  });
}

function formError(err: unknown, tooLarge: () => GatewayError): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
  if (code === 'FST_FILES_LIMIT') return onlyFile('file');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return new GatewayError('invalid_request', 'the form has too many fields');
  }
  return new GatewayError(
    'invalid_request',
    `the multipart/form-data body could not be read: ${err instanceof Error ? err.message : String(err)}`,
  );
}
