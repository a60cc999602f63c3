// Files (`/v1/files`): OpenAI's file object whatever the provider holds the file, and what a provider's file
// calls take. Uploads are streamed through, never held whole (routes/v1/files.ts).
import { z } from 'zod';

/** OpenAI's purposes, and the reference's `batch_output` and `responses`. */
export const FILE_PURPOSES = [
  'assistants',
  'batch',
  'batch_output',
  'fine-tune',
  'vision',
  'user_data',
  'evals',
  'responses',
] as const;
export const FilePurpose = z.enum(FILE_PURPOSES);
export type FilePurpose = z.infer<typeof FilePurpose>;

export const FileObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('file'),
    bytes: z.number(),
    created_at: z.number(),
    filename: z.string(),
    purpose: z.string(),
    status: z.string().optional(),
    status_details: z.string().nullable().optional(),
    expires_at: z.number().nullable().optional(),
  })
  .meta({ id: 'FileObject' });
export type FileObject = z.infer<typeof FileObject>;

export const FileList = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(FileObject),
    has_more: z.boolean(),
    first_id: z.string().nullable().optional(),
    last_id: z.string().nullable().optional(),
  })
  .meta({ id: 'FileList' });
export type FileList = z.infer<typeof FileList>;

export const FileDeleted = z
  .looseObject({ id: z.string(), object: z.literal('file'), deleted: z.boolean() })
  .meta({ id: 'FileDeleted' });
export type FileDeleted = z.infer<typeof FileDeleted>;

/** OpenAI's `expires_after`: the file is deleted this long after its anchor. */
export interface FileExpiry {
  anchor: 'created_at';
  seconds: number;
}

/** The form's text fields, complete once the upload's bytes have all been read. */
export interface UploadFields {
  purpose: FilePurpose;
  expires_after?: FileExpiry;
}

/** One upload on its way through. */
export interface FileUpload {
  filename: string;
  /** The media type the caller declared for the file part. */
  mimetype: string;
  /**
   * The file's bytes as they arrive from the caller. Fails past the gateway's bound (413) or when the form is
   * malformed or misses `purpose` (400): an upstream request fed from it is then aborted, nothing stored.
   */
  data: AsyncIterable<Uint8Array>;
  /** The text fields: complete (and validated) once `data` has ended. */
  fields(): UploadFields;
}

export interface FileListQuery {
  purpose?: string | undefined;
  limit?: number | undefined;
  after?: string | undefined;
  order?: 'asc' | 'desc' | undefined;
}
