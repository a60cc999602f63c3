// The OpenAI-format container calls: their documentation in /openapi.json, the caller's bodies checked before
// anything is sent, and the provider a call goes to (on a native family's mount, its own provider by default).
import { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import type { BilledUnits } from '../../engine/operations.ts';
import { PROVIDER_HEADER } from '../../engine/resource-provider.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import {
  ContainerCreateBody,
  type ContainerCreateRequest,
  ContainerDeleted,
  ContainerFileDeleted,
  ContainerFileList,
  ContainerFileObject,
  type ContainerFileSource,
  ContainerList,
  ContainerListQuery,
  ContainerObject,
} from '../../schemas/containers.ts';
import { isRecord } from '../../util/records.ts';
import type { WireFormat } from '../types.ts';

const ProviderQuery = z.object({
  provider: z.string().optional().meta({ description: 'The provider (or the x-model-provider header)' }),
});
const ContainerParams = z.object({ container_id: z.string().min(1).max(512) });
const FileParams = ContainerParams.extend({ file_id: z.string().min(1).max(512) });

export const ContainerFileForm = z
  .object({
    file: z.string().meta({ format: 'binary' }),
    file_id: z.string().optional().meta({ description: 'Instead of file: one of the provider’s files, copied in' }),
    provider: z.string().optional(),
  })
  .meta({ id: 'ContainerFileCreateForm' });
export const ContainerFileJson = z.looseObject({
  file_id: z.string().min(1).max(512),
  provider: z.string().optional(),
});

const tags = ['Containers'];
const ERRORS = [403, 404, 429, 502, 504];
/** Creates are admitted like inference requests: a spent budget is a 402, unreachable counters a 503. */
const CREATE_ERRORS = [...ERRORS, 402, 503];

/** The route docs, by operation. */
export const CONTAINER_DOCS = {
  create: doc('createContainer', 'Create a container', {
    querystring: ProviderQuery,
    body: ContainerCreateBody,
    bodyExamples: [{ name: 'analysis', expires_after: { anchor: 'last_active_at', minutes: 20 } }],
    responses: { 200: { description: 'The container (OpenAI shape)', json: ContainerObject } },
    errors: CREATE_ERRORS,
  }),
  list: doc('listContainers', 'List containers', {
    querystring: ContainerListQuery,
    responses: { 200: { description: 'A page of containers', json: ContainerList } },
  }),
  retrieve: doc('retrieveContainer', 'Retrieve a container', {
    params: ContainerParams,
    querystring: ProviderQuery,
    responses: { 200: { description: 'The container', json: ContainerObject } },
  }),
  delete: doc('deleteContainer', 'Delete a container', {
    params: ContainerParams,
    querystring: ProviderQuery,
    responses: { 200: { description: 'The container is deleted', json: ContainerDeleted } },
  }),
  createFile: doc('createContainerFile', 'Put a file into a container (streamed upload, or a file id as JSON)', {
    description:
      'multipart/form-data with a `file` part, streamed through within client.max_file_upload_size_mb (413 ' +
      'beyond), or a JSON body `{"file_id": ...}` naming one of the provider’s files to copy in.',
    params: ContainerParams,
    querystring: ProviderQuery,
    body: ContainerFileForm,
    bodyType: 'multipart/form-data',
    responses: { 200: { description: 'The container file', json: ContainerFileObject } },
    errors: [...CREATE_ERRORS, 413, 415],
  }),
  listFiles: doc('listContainerFiles', 'List the files of a container', {
    params: ContainerParams,
    querystring: ContainerListQuery.omit({ name: true }),
    responses: { 200: { description: 'A page of container files', json: ContainerFileList } },
  }),
  retrieveFile: doc('retrieveContainerFile', 'Retrieve a container file', {
    params: FileParams,
    querystring: ProviderQuery,
    responses: { 200: { description: 'The container file', json: ContainerFileObject } },
  }),
  deleteFile: doc('deleteContainerFile', 'Delete a container file', {
    params: FileParams,
    querystring: ProviderQuery,
    responses: { 200: { description: 'The file is deleted', json: ContainerFileDeleted } },
  }),
  fileContent: doc('getContainerFileContent', 'Download a container file’s content, streamed', {
    params: FileParams,
    querystring: ProviderQuery,
    responses: { 200: { description: 'The bytes as the provider sends them', text: 'application/octet-stream' } },
  }),
} satisfies Record<string, RouteDoc>;

function doc(operationId: string, summary: string, d: Omit<RouteDoc, 'operationId' | 'summary' | 'tags'>): RouteDoc {
  return { operationId, summary, tags, errors: ERRORS, ...d };
}

export function containerParams(v: unknown): { container_id: string } {
  return checked(ContainerParams, v);
}

export function fileParams(v: unknown): { container_id: string; file_id: string } {
  return checked(FileParams, v);
}

export function listQuery(v: unknown): ContainerListQuery {
  const { provider: _, ...q } = checked(ContainerListQuery, v);
  return q;
}

/**
 * What a container is billed as: 1 GB containers, so `4g` is 4 (OpenAI lists 4, 16 and 64 GB at 4, 16 and 64
 * times the 1 GB price). No memory_limit, or one the gateway cannot read, is the 1 GB default.
 */
export function containerUnits(memoryLimit: unknown): BilledUnits {
  const gb = typeof memoryLimit === 'string' ? /^([0-9]{1,3})g$/i.exec(memoryLimit.trim())?.[1] : undefined;
  return { containers: gb === undefined ? 1 : Math.max(1, Number(gb)) };
}

/** A create body: checked, and the provider it names (the reference's body field) taken off before it goes on. */
export function createBody(v: unknown): { req: ContainerCreateRequest; provider: string | undefined } {
  const { provider, ...req } = checked(ContainerCreateBody, v);
  return { req, provider };
}

/** A JSON file-create body: the file id to copy in; its other fields pass on. */
export function fileIdBody(v: unknown): { source: ContainerFileSource; provider: string | undefined } {
  const { file_id, provider, ...extra } = checked(ContainerFileJson, v);
  return { source: { kind: 'file_id', fileId: file_id, extra }, provider };
}

/**
 * The provider named by a field, or on a family whose format has its own provider (`/compat-a` → openai) that
 * provider when the request names none anywhere; undefined leaves the choice to resolveProvider.
 */
export function providerField(
  format: WireFormat,
  query: unknown,
  headers: Record<string, unknown>,
  field: string | undefined,
): string | undefined {
  const q = isRecord(query) ? query : {};
  const named = field ?? q['provider'] ?? q[PROVIDER_HEADER] ?? headers[PROVIDER_HEADER];
  return named === undefined ? format.defaultProvider : field;
}

function checked<T>(schema: z.ZodType<T>, v: unknown): T {
  const r = schema.safeParse(v ?? {});
  if (r.success) return r.data;
  const param = r.error.issues[0]?.path.join('.') || undefined;
  throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
}
