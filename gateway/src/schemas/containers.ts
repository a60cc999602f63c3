// Containers (`/v1/containers`): OpenAI's code-interpreter containers and the files in them, in OpenAI's shapes
// whatever provider holds them, and what a provider's container calls take. Uploads are streamed through.
import { z } from 'zod';

const Metadata = z.record(z.string().max(64), z.string().max(512));

const ExpiresAfter = z.object({
  anchor: z.literal('last_active_at'),
  minutes: z.number().int().min(1).max(525_600),
});

/** A container create body as it goes upstream; fields the gateway does not read pass on unchanged. */
const ContainerCreateFields = z.looseObject({
  name: z.string().min(1).max(256),
  expires_after: ExpiresAfter.optional(),
  file_ids: z.array(z.string().min(1).max(512)).max(100).optional(),
  memory_limit: z.string().max(16).optional(),
  metadata: Metadata.optional(),
});
export type ContainerCreateRequest = z.infer<typeof ContainerCreateFields>;

/** What a caller sends: the reference names the provider in the body too (taken off before it goes upstream). */
export const ContainerCreateBody = ContainerCreateFields.extend({ provider: z.string().optional() }).meta({
  id: 'ContainerCreateRequest',
});
export type ContainerCreateBody = z.infer<typeof ContainerCreateBody>;

export const ContainerObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('container'),
    name: z.string(),
    created_at: z.number(),
    status: z.string(),
    expires_after: z.looseObject({ anchor: z.string().optional(), minutes: z.number().optional() }).optional(),
    last_active_at: z.number().optional(),
    memory_limit: z.string().optional(),
    metadata: z.record(z.string(), z.string()).optional(),
  })
  .meta({ id: 'ContainerObject' });
export type ContainerObject = z.infer<typeof ContainerObject>;

export const ContainerFileObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('container.file'),
    container_id: z.string(),
    path: z.string(),
    bytes: z.number(),
    created_at: z.number(),
    source: z.string(),
  })
  .meta({ id: 'ContainerFileObject' });
export type ContainerFileObject = z.infer<typeof ContainerFileObject>;

function page<T extends z.ZodType>(item: T, id: string) {
  return z
    .looseObject({
      object: z.literal('list'),
      data: z.array(item),
      first_id: z.string().nullable().optional(),
      last_id: z.string().nullable().optional(),
      has_more: z.boolean(),
    })
    .meta({ id });
}

export const ContainerList = page(ContainerObject, 'ContainerList');
export type ContainerList = z.infer<typeof ContainerList>;
export const ContainerFileList = page(ContainerFileObject, 'ContainerFileList');
export type ContainerFileList = z.infer<typeof ContainerFileList>;

export const ContainerDeleted = z
  .looseObject({ id: z.string(), object: z.literal('container.deleted'), deleted: z.boolean() })
  .meta({ id: 'ContainerDeleted' });
export type ContainerDeleted = z.infer<typeof ContainerDeleted>;

export const ContainerFileDeleted = z
  .looseObject({ id: z.string(), object: z.literal('container.file.deleted'), deleted: z.boolean() })
  .meta({ id: 'ContainerFileDeleted' });
export type ContainerFileDeleted = z.infer<typeof ContainerFileDeleted>;

/** Paging of both listings (OpenAI's cursor pages); `name` filters containers by name. */
export const ContainerListQuery = z.object({
  provider: z.string().optional().meta({ description: 'The provider (or the x-model-provider header)' }),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().min(1).max(512).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  name: z.string().max(256).optional(),
});
export type ContainerListQuery = Omit<z.infer<typeof ContainerListQuery>, 'provider'>;

/** A file put into a container: an uploaded one streamed through, or one of the provider's files copied in. */
export type ContainerFileSource =
  | {
      kind: 'upload';
      filename: string;
      mimetype: string;
      /** The bytes as they arrive; fails past the gateway's bound (413) or on a malformed form (400). */
      data: AsyncIterable<Uint8Array>;
      /** The form's other text fields (after the file too): complete once `data` has ended. */
      fields(): ReadonlyMap<string, string>;
    }
  | { kind: 'file_id'; fileId: string; extra: Record<string, unknown> };
