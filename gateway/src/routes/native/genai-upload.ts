// `POST /genai/upload/v1beta/files`: Google's resumable upload protocol, and the multipart form (`metadata` +
// `file`) in one call. `start` answers an `X-Goog-Upload-URL` back at the gateway holding a session token
// (genai-upload-sessions.ts); the bytes then come to that URL. Bytes that come in one request (`upload,
// finalize` at offset 0: the SDK's way for files up to 8 MiB) and forms are one upload through the provider,
// admitted, logged, owned and batch-input-scanned exactly as `/v1/files` uploads are; bytes in several requests
// open Google's session at the first and go on through it with the same key.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type BatchInputScan, batchInputRef, scanBatchInput } from '../../engine/batch-input-scan.ts';
import { callerGone, type ResourceCall, runResourceCall } from '../../engine/resource-call.ts';
import { rememberResourceKey } from '../../engine/resource-keys.ts';
import { callerOwner, recordOwner } from '../../engine/resource-owners.ts';
import type { ResourceRef } from '../../engine/resource-ref.ts';
import { GatewayError } from '../../http/errors.ts';
import { StreamedForm } from '../../http/multipart-stream.ts';
import { RequestError } from '../../http/request-error.ts';
import { ProviderError } from '../../providers/errors.ts';
import { redactError, secretsOf } from '../../providers/shared/redact.ts';
import type { CallContext, GenaiFileCalls, GoogleJson, ProviderAdapter } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { FileUpload } from '../../schemas/files.ts';
import { genaiFileProvider } from './genai-file-provider.ts';
import { holderOf, sessionNotFound, type UploadSession, UploadSessions } from './genai-upload-sessions.ts';
import {
  checkStart,
  parseMetadata,
  readMetadata,
  startOf,
  type UploadStart,
  uploadCommand,
  uploadOffset,
} from './genai-upload-wire.ts';

const MB = 1024 * 1024;
/** Google's chunk granularity: the SDK's 8 MiB chunks are multiples of it. */
const GRANULARITY = 256 * 1024;
const requestType = 'file_upload';

export async function genaiUpload(rt: Runtime, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const fail = (err: unknown) =>
    err instanceof RequestError ? err : new RequestError(err, { request_type: requestType });
  reply.header('x-gateway-request-id', request.id);
  try {
    return await route(rt, request, reply);
  } catch (err) {
    // An early 4xx leaves the rest of the body unread: the connection then closes.
    reply.header('connection', 'close');
    throw fail(err);
  }
}

async function route(rt: Runtime, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  if (request.isMultipart()) return formUpload(rt, request, reply);
  const token = (request.query as Record<string, unknown>)['upload_id'];
  const sessions = new UploadSessions(rt);
  if (token === undefined) {
    checkStart(request.headers);
    const start = startOf(request.headers, await readMetadata(request.raw), maxBytes(rt));
    const provider = genaiFileProvider(rt, request);
    const holder = holderOf(request.principal);
    const id = await sessions.create({ holder, provider, ...start, offset: 0 });
    const path = request.url.split('?')[0] ?? '';
    const host = request.headers.host ?? 'localhost';
    reply.headers({
      'x-goog-upload-url': `${request.protocol}://${host}${path}?upload_id=${id}&upload_protocol=resumable`,
      'x-goog-upload-status': 'active',
      'x-goog-upload-chunk-granularity': String(GRANULARITY),
    });
    return reply.send('');
  }
  if (typeof token !== 'string') throw sessionNotFound();
  const command = uploadCommand(request.headers);
  const session = await sessions.get(token, request.principal);
  if (command === 'query') {
    reply.headers({ 'x-goog-upload-status': 'active', 'x-goog-upload-size-received': String(session.offset) });
    return reply.send('');
  }
  if (command === 'cancel') {
    await sessions.end(token);
    const up = session.upstream;
    if (up) await direct(rt, reply, session, (g, ctx) => g.cancel(up.url, ctx));
    reply.header('x-goog-upload-status', 'cancelled');
    return reply.send('');
  }
  const offset = uploadOffset(request.headers, session.offset);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && offset + declared > maxBytes(rt)) throw tooLarge(rt);
  if (!(await sessions.hold(token, holdMs(rt, session)))) {
    throw new GatewayError('conflict', 'another request is sending bytes of this upload; wait for it to end');
  }
  try {
    if (!session.upstream && command === 'upload, finalize') {
      const data = bounded(rt, request.raw, maxBytes(rt));
      const file = await oneUpload(rt, request, reply, session.provider, session, data);
      await sessions.end(token);
      return file;
    }
    return await nextBytes(rt, request, reply, token, sessions, session, command);
  } finally {
    await sessions.release(token);
  }
}

/** A multipart form: the `metadata` part (JSON, before the file) and the `file` part, as one upload. */
async function formUpload(rt: Runtime, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const form = await StreamedForm.open(request, rt.state.snapshot.client.max_file_upload_size_mb);
  try {
    const file = form.file;
    if (!file)
      throw new GatewayError('invalid_request', 'file: required (a multipart part named "file")', { param: 'file' });
    const meta = form.fields.get('metadata');
    const metadata = meta === undefined ? {} : parseMetadata(meta);
    const start = startOf({ 'x-goog-upload-header-content-type': file.mimetype }, metadata, maxBytes(rt));
    if (!start.filename) start.filename = file.filename;
    const provider = genaiFileProvider(rt, request, form.fields.get('provider'));
    const late = (name: string) =>
      name === 'metadata'
        ? new GatewayError('invalid_request', 'metadata: send the metadata part before the file part', {
            param: 'metadata',
          })
        : undefined;
    const data = form.bytes(() => undefined, late);
    try {
      return await oneUpload(rt, request, reply, provider, start, data);
    } catch (err) {
      throw form.failure ?? err;
    }
  } finally {
    form.release();
  }
}

/** The whole file in one request: one upload through the provider, as `/v1/files` makes it. */
async function oneUpload(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  provider: string,
  start: UploadStart,
  data: AsyncIterable<Uint8Array>,
): Promise<unknown> {
  const up: FileUpload = {
    filename: start.filename,
    mimetype: start.mimetype,
    data,
    fields: () => ({ purpose: 'user_data' }),
  };
  let scan: BatchInputScan | undefined;
  const c: ResourceCall<GoogleJson> = {
    requestType,
    label: 'file uploads',
    idempotent: false,
    admit: true,
    created: (v) => fileRef(v),
    createdRows: (v) => (scan?.passed() ? [batchInputRef(fileRef(v).id)] : []),
    method: (a) => {
      const g = a.files?.genai;
      if (!g) return undefined;
      return (ctx) => {
        // A virtual key's Gemini batch input has its lines checked on the way (engine/batch-input-scan.ts).
        scan = scanBatchInput(rt, request.principal, a, ctx, up);
        return g.upload(start, (scan?.upload ?? up).data, () => undefined, ctx);
      };
    },
  };
  const r = await runResourceCall(rt, request, provider, c, callerGone(reply));
  if (r.rateHeaders) reply.headers(r.rateHeaders);
  reply.header('x-goog-upload-status', 'final');
  return r.value;
}

/** Bytes of an upload that comes in several requests: the first opens Google's session, the rest go on in it. */
async function nextBytes(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  sessions: UploadSessions,
  session: UploadSession,
  command: 'upload' | 'upload, finalize',
): Promise<unknown> {
  const counted = counter(bounded(rt, request.raw, maxBytes(rt) - session.offset));
  const body = () => Readable.from(counted.data, { objectMode: false });
  const upstream = session.upstream;
  if (!upstream) {
    const c: ResourceCall<string> = {
      requestType,
      label: 'file uploads',
      idempotent: false,
      admit: true,
      method: (a) => {
        const g = a.files?.genai;
        if (!g) return undefined;
        return async (ctx) => {
          refuseScanned(rt, request, a, ctx, session);
          const url = await g.open(session, ctx);
          try {
            await g.chunk(url, { command, offset: 0, body: body() }, ctx);
          } catch (err) {
            await g.cancel(url, ctx);
            throw err;
          }
          return url;
        };
      },
    };
    const r = await runResourceCall(rt, request, session.provider, c, callerGone(reply));
    if (r.rateHeaders) reply.headers(r.rateHeaders);
    await sessions.save(token, {
      ...session,
      offset: counted.bytes(),
      upstream: { url: r.value, keyId: r.outcome.selectedKeyId },
    });
    reply.header('x-goog-upload-status', 'active');
    return reply.send('');
  }
  const sent = await direct(rt, reply, session, (g, ctx) =>
    g.chunk(upstream.url, { command, offset: session.offset, body: body() }, ctx),
  );
  if (command === 'upload') {
    await sessions.save(token, { ...session, offset: session.offset + counted.bytes() });
    reply.header('x-goog-upload-status', sent.status);
    return reply.send('');
  }
  const answer = sent.json ?? {};
  const ref = fileRef(answer);
  await rememberResourceKey(rt, session.provider, ref, upstream.keyId);
  await recordOwner(rt, callerOwner(request.principal), session.provider, [ref], upstream.keyId);
  await sessions.end(token);
  reply.header('x-goog-upload-status', 'final');
  return answer;
}

/**
 * A batch input is read line by line as it passes (engine/batch-input-scan.ts), which needs all its bytes in
 * one request: a virtual key's JSONL upload in several requests is refused before Google sees any of it.
 */
function refuseScanned(rt: Runtime, request: FastifyRequest, a: ProviderAdapter, ctx: CallContext, s: UploadSession) {
  const probe: FileUpload = {
    filename: s.filename,
    mimetype: s.mimetype,
    data: (async function* () {})(),
    fields: () => ({ purpose: 'batch' }),
  };
  if (!scanBatchInput(rt, request.principal, a, ctx, probe)) return;
  throw new GatewayError(
    'invalid_request',
    'a JSON Lines upload by a virtual key is checked as a batch input and must come in one request (upload, finalize at offset 0, or the multipart form); this one came in several',
    { param: 'file' },
  );
}

/** A call in the session's open Google upload, with the key that opened it. */
async function direct<T>(
  rt: Runtime,
  reply: FastifyReply,
  session: UploadSession,
  call: (g: GenaiFileCalls, ctx: CallContext) => Promise<T>,
): Promise<T> {
  const entry = rt.state.snapshot.providers.get(session.provider);
  const key = session.upstream && entry?.keysById.get(session.upstream.keyId);
  const g = rt.adapters.get(session.provider)?.files?.genai;
  if (!entry || !key || !g) {
    throw new GatewayError('not_found', 'upload session not found (its provider key is no longer configured)');
  }
  const ctx: CallContext = {
    provider: session.provider,
    model: '',
    key,
    network: entry.network,
    signal: callerGone(reply),
    dispatcher: rt.dispatcher,
  };
  try {
    return await call(g, ctx);
  } catch (err) {
    if (err instanceof ProviderError) throw redactError(err, secretsOf(entry.keys));
    throw err;
  }
}

function fileRef(v: GoogleJson): ResourceRef {
  const file = v['file'];
  const name = file !== null && typeof file === 'object' ? (file as GoogleJson)['name'] : undefined;
  if (typeof name !== 'string')
    throw new ProviderError('bad_response', 'upstream answered an upload without file.name');
  return { kind: 'file', id: name };
}

function maxBytes(rt: Runtime): number {
  return rt.state.snapshot.client.max_file_upload_size_mb * MB;
}

function tooLarge(rt: Runtime): GatewayError {
  return new GatewayError(
    'payload_too_large',
    `the file is larger than ${maxBytes(rt) / MB} MB (client.max_file_upload_size_mb)`,
  );
}

/** The provider's timeout, and a minute more for the bytes to arrive: how long a request may hold a session. */
function holdMs(rt: Runtime, s: UploadSession): number {
  return (rt.state.snapshot.providers.get(s.provider)?.network.timeout_ms ?? 600_000) + 60_000;
}

/** The request's bytes, failing past `limit` (413) as they arrive. */
async function* bounded(rt: Runtime, raw: IncomingMessage, limit: number): AsyncIterable<Uint8Array> {
  let n = 0;
  for await (const chunk of raw) {
    const buf = chunk as Buffer; // a request stream without an encoding yields Buffers
    n += buf.length;
    if (n > limit) throw tooLarge(rt);
    yield buf;
  }
}

function counter(data: AsyncIterable<Uint8Array>): { data: AsyncIterable<Uint8Array>; bytes: () => number } {
  let n = 0;
  async function* counting() {
    for await (const chunk of data) {
      n += chunk.length;
      yield chunk;
    }
  }
  return { data: counting(), bytes: () => n };
}
