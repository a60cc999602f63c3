// `/v1/containers…` (OpenAI's code-interpreter containers and their files): model-less calls
// (engine/resource-call.ts) to the provider the request names, sent with the key that created the container.
// A file upload is streamed through within client.max_file_upload_size_mb, never held whole.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ByIdOp, kindById, type ResourceKind } from '../../engine/resource-by-id.ts';
import type { ResourceCall } from '../../engine/resource-call.ts';
import { ownedListCall } from '../../engine/resource-list.ts';
import type { ResourceRef } from '../../engine/resource-ref.ts';
import {
  CONTAINER_DOCS,
  containerParams,
  containerUnits,
  createBody,
  fileIdBody,
  fileParams,
  listQuery,
  providerField,
} from '../../formats/openai/containers.ts';
import type { WireFormat } from '../../formats/types.ts';
import { CONTAINER_MODEL } from '../../governance/pricing/units-table.ts';
import { GatewayError } from '../../http/errors.ts';
import { registerUploadRoute } from '../../http/multipart.ts';
import { StreamedForm } from '../../http/multipart-stream.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RequestError } from '../../http/request-error.ts';
import type { CallContext, ContainerCalls, ProviderAdapter } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { ContainerFileSource, ContainerListQuery } from '../../schemas/containers.ts';
import { answer, answerById } from './files.ts';

type Choose<T> = (c: ContainerCalls) => ((ctx: CallContext) => Promise<T>) | undefined;

/** The container calls' method, or undefined when the provider has no containers or not this call. */
function method<T>(pick: Choose<T>): ResourceCall<T>['method'] {
  return (a) => (a.containers ? pick(a.containers) : undefined);
}

const container = (id: string): ResourceRef => ({ kind: 'container', id });

type ContainerId = { container_id: string };

/** A container, as the routes on one container address it. */
const CONTAINER = kindById(
  'container',
  (a) => a.containers,
  (params) => containerParams(params).container_id,
);
/** What the routes under one container share: the container is the resource addressed (and owned). */
const IN_CONTAINER = {
  kind: 'container',
  calls: (a: ProviderAdapter) => a.containers,
  id: (p: ContainerId) => p.container_id,
};
/** The files of a container, listed. */
const CONTAINER_FILES: ResourceKind<
  ContainerCalls,
  ContainerId & { query: ContainerListQuery },
  [string, ContainerListQuery]
> = {
  ...IN_CONTAINER,
  params: (params, query) => ({ ...containerParams(params), query: listQuery(query) }),
  args: (p) => [p.container_id, p.query],
};
/** One file of a container. */
const CONTAINER_FILE: ResourceKind<ContainerCalls, ContainerId & { file_id: string }, [string, string]> = {
  ...IN_CONTAINER,
  params: (params) => fileParams(params),
  args: (p) => [p.container_id, p.file_id],
};

export function registerContainerRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  /** Where the request names its provider besides the query and headers (the format's own when none). */
  const named = (request: FastifyRequest, field?: string) => ({
    field: providerField(format, request.query, request.headers, field),
  });
  /** Runs a call against the provider the request names. */
  const run = <T>(request: FastifyRequest, reply: FastifyReply, c: ResourceCall<T>, field?: string) =>
    answer(rt, request, reply, named(request, field), c);
  /** A route on one container, or one of its files. */
  const byId = <P, A extends unknown[], T>(
    kind: ResourceKind<ContainerCalls, P, A>,
    op: ByIdOp<ContainerCalls, A, T>,
  ) => answerById(rt, kind, op, named);
  const docs = (openapi: RouteDoc) => ({ config: { openapi } });

  app.post('/containers', docs(CONTAINER_DOCS.create), (request, reply) => {
    const { req, provider } = failing('container_create', () => createBody(request.body));
    const c: ResourceCall<{ id: string; memory_limit?: unknown }> = {
      requestType: 'container_create',
      label: 'creating containers',
      idempotent: false,
      admit: true,
      // Files copied in must be in the container's account: the key that uploaded the first one goes first
      // (nothing is created on a 404, so the next key may be tried).
      target: req.file_ids?.[0] === undefined ? undefined : { kind: 'file', id: req.file_ids[0] },
      // Every file copied in must be the caller's (another tenant's is not found).
      uses: req.file_ids?.slice(1).map((id) => ({ kind: 'file', id })),
      created: (v) => container(v.id),
      // Charged per container by its memory (the answer's, else the request's), like OpenAI bills it.
      price: {
        model: CONTAINER_MODEL,
        estimate: containerUnits(req.memory_limit),
        units: (v) => containerUnits(v.memory_limit ?? req.memory_limit),
      },
      method: method((k) => k.create && ((ctx) => k.create!(req, ctx))),
    };
    return run(request, reply, c, provider);
  });
  app.get('/containers', docs(CONTAINER_DOCS.list), (request, reply) => {
    const q = failing('container_list', () => listQuery(request.query));
    const list = { requestType: 'container_list', label: 'listing containers', method: (k: ContainerCalls) => k.list };
    return run(request, reply, ownedListCall(rt, request.principal, CONTAINER, list, q));
  });
  app.get(
    '/containers/:container_id',
    docs(CONTAINER_DOCS.retrieve),
    byId(CONTAINER, { requestType: 'container_retrieve', label: 'retrieving containers', method: (k) => k.retrieve }),
  );
  app.delete(
    '/containers/:container_id',
    docs(CONTAINER_DOCS.delete),
    byId(CONTAINER, {
      requestType: 'container_delete',
      label: 'deleting containers',
      method: (k) => k.delete,
      deletes: true,
    }),
  );

  registerUploadRoute(app, {
    method: 'POST',
    url: '/containers/:container_id/files',
    config: { openapi: CONTAINER_DOCS.createFile },
    handler: (request, reply) => createFile(rt, request, reply, format),
  });
  app.get(
    '/containers/:container_id/files',
    docs(CONTAINER_DOCS.listFiles),
    byId(CONTAINER_FILES, {
      requestType: 'container_file_list',
      label: 'listing container files',
      method: (k) => k.listFiles,
    }),
  );
  app.get(
    '/containers/:container_id/files/:file_id',
    docs(CONTAINER_DOCS.retrieveFile),
    byId(CONTAINER_FILE, {
      requestType: 'container_file_retrieve',
      label: 'retrieving container files',
      method: (k) => k.retrieveFile,
    }),
  );
  // Only the file goes: the container's owner record stays.
  app.delete(
    '/containers/:container_id/files/:file_id',
    docs(CONTAINER_DOCS.deleteFile),
    byId(CONTAINER_FILE, {
      requestType: 'container_file_delete',
      label: 'deleting container files',
      method: (k) => k.deleteFile,
    }),
  );
  app.get(
    '/containers/:container_id/files/:file_id/content',
    docs(CONTAINER_DOCS.fileContent),
    byId(CONTAINER_FILE, {
      requestType: 'container_file_content',
      label: 'container file content',
      method: (k) => k.fileContent,
    }),
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
      uses: source.kind === 'file_id' ? [{ kind: 'file', id: source.fileId }] : undefined,
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
  const form = await StreamedForm.open(request, rt.state.snapshot.client.max_file_upload_size_mb).catch(
    (err: unknown) => {
      throw fail(err);
    },
  );
  const { fields, file } = form;
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
  let complete = false;
  const source: ContainerFileSource = {
    kind: 'upload',
    filename: file.filename,
    mimetype: file.mimetype,
    data: form.bytes(() => {
      complete = true;
    }, beforeFile),
    fields: () => {
      if (!complete) throw new GatewayError('invalid_request', 'the form was not read to its end');
      return fields;
    },
  };
  try {
    const sent = await send(source, provider, () => form.failure);
    reply.removeHeader('connection');
    return sent;
  } finally {
    form.release();
  }
}

/** `provider` and `file_id` decide where the file goes: after the file part they come too late. */
function beforeFile(field: string): GatewayError | undefined {
  if (field !== 'provider' && field !== 'file_id') return undefined;
  return new GatewayError('invalid_request', `form field ${field} must come before the file`, { param: field });
}
