// The async job object as callers read it (the reference's AsyncJobResponse, with our status names), and the
// stored request a worker rebuilds the call from.
import { z } from 'zod';
import { Form } from '../http/multipart.ts';
import { ErrorEnvelopeSchema } from '../schemas/errors.ts';
import type { JobRow, JobStatus, StoredRequest } from '../state/services/jobs/index.ts';

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;

export const AsyncJobView = z
  .object({
    id: z.string().describe('The job id (also the request id of its log row and its budget charge).'),
    status: z.enum(JOB_STATUSES),
    created_at: z.string().describe('RFC 3339'),
    completed_at: z.string().optional().describe('When the job ended (completed, failed or cancelled)'),
    expires_at: z.string().optional().describe('When the ended job and its result are deleted'),
    status_code: z.int().optional().describe('The HTTP status the synchronous route would have answered'),
    result: z
      .unknown()
      .optional()
      .describe(
        'The synchronous route’s answer (with extra_fields); a text answer as a string, audio as ' +
          '{content_type, data} with the bytes in base64',
      ),
    error: ErrorEnvelopeSchema.optional(),
  })
  .meta({ title: 'AsyncJob' });
export type AsyncJobView = z.infer<typeof AsyncJobView>;

export const AsyncJobParams = z.object({ job_id: z.string().describe('The id the submission answered') });

/** Still to end: polled again (202); ended: 200. */
export function isOpen(status: JobStatus): boolean {
  return status === 'queued' || status === 'processing';
}

export function jobView(row: JobRow): AsyncJobView {
  return {
    id: row.id,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    ...(row.completedAt ? { completed_at: row.completedAt.toISOString() } : {}),
    ...(row.expiresAt ? { expires_at: row.expiresAt.toISOString() } : {}),
    ...(row.statusCode !== null ? { status_code: row.statusCode } : {}),
    ...(row.status === 'completed' ? { result: row.result } : {}),
    ...(row.error !== null ? { error: row.error as AsyncJobView['error'] } : {}), // stored from toEnvelope
  };
}

/** Request headers never stored with a job: credentials, hop-by-hop, and the submission's own settings. */
const NOT_STORED = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'x-gateway-vk',
]);
const CREDENTIAL = /(^|-)(api-?key|token|secret|password|signature|credential)s?(-|$)|^x-amz-/;

export function storableHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':') || NOT_STORED.has(name) || CREDENTIAL.test(name)) continue;
    out[name] = value;
  }
  return out;
}

/** A read form as JSON (files in base64). */
export function storedForm(form: Form): NonNullable<StoredRequest['form']> {
  return {
    fields: [...form.fields],
    files: form.files.map((f) => ({
      field: f.field,
      filename: f.filename,
      mimetype: f.mimetype,
      data: f.data.toString('base64'),
    })),
  };
}

/** The body the decoder takes: the JSON body, or the form rebuilt. */
export function storedBody(req: StoredRequest): unknown {
  if (req.form === undefined) return req.body;
  const form = new Form();
  for (const [name, values] of req.form.fields) form.fields.set(name, values);
  for (const f of req.form.files) {
    form.files.push({
      field: f.field,
      filename: f.filename,
      mimetype: f.mimetype,
      data: Buffer.from(f.data, 'base64'),
    });
  }
  return form;
}
