// `multipart/form-data` request bodies (image edits, audio transcriptions, file uploads, WebRTC offers), read
// through @fastify/multipart with limits per route. Only routes registered with registerUploadRoute take them;
// every other route answers 415 to a multipart body, as it does to any type it does not read.
import fastifyMultipart from '@fastify/multipart';
import type {
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteOptions,
} from 'fastify';
import { GatewayError } from './errors.ts';

const MB = 1024 * 1024;

/** Bounds on one form. Every byte counts: a part past a bound is a 413 and nothing is read further. */
export interface FormLimits {
  /** Largest file part. */
  maxFileBytes: number;
  /** Most file parts. */
  maxFiles: number;
  /** Most text fields. Default 64. */
  maxFields?: number;
  /** Largest text field. Default 1 MB. */
  maxFieldBytes?: number;
}

export interface FormFile {
  /** The form field the file came in (`file`, `image`, `image[]`, `mask`). */
  field: string;
  filename: string;
  /** The media type the client declared for the part. */
  mimetype: string;
  data: Buffer;
}

/** A read form: text fields (a repeated name keeps every value, in order) and files, in order. */
export class Form {
  readonly fields = new Map<string, string[]>();
  readonly files: FormFile[] = [];

  /** The field's single value; a repeated field is a 400 naming it. */
  field(name: string): string | undefined {
    const values = this.fields.get(name);
    if (values === undefined) return undefined;
    if (values.length > 1) throw new GatewayError('invalid_request', `form field ${name} is given more than once`);
    return values[0];
  }

  /** The files sent under any of these field names. */
  filesNamed(...names: string[]): FormFile[] {
    return this.files.filter((f) => names.includes(f.field));
  }
}

/**
 * Registers a route that takes `multipart/form-data` bodies (besides JSON ones, if it reads both), inside its
 * family. The multipart parser lives in a scope of its own around the route: the plugin's per-request hooks (a
 * `close` listener on every response, an async `onResponse`) then run on upload routes only, not on every
 * request of the family (~12 µs of CPU per request on the keyless path, docs/benchmarks.md). The scope inherits
 * the family's prefix, authentication, error handler and route census.
 */
export function registerUploadRoute<G extends RouteGenericInterface = RouteGenericInterface>(
  family: FastifyInstance,
  route: RouteOptions<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, G>,
): void {
  family.register(async (scope) => {
    await scope.register(fastifyMultipart, { throwFileSizeLimit: true });
    scope.route<G>(route);
  });
}

/** Reads a whole form within `limits`; 413 past a bound, 400 for a malformed body. */
export async function readForm(request: FastifyRequest, limits: FormLimits): Promise<Form> {
  const form = new Form();
  const maxFields = limits.maxFields ?? 64;
  const maxFieldBytes = limits.maxFieldBytes ?? MB;
  try {
    const parts = request.parts({
      limits: {
        fileSize: limits.maxFileBytes,
        files: limits.maxFiles,
        fields: maxFields,
        fieldSize: maxFieldBytes,
        parts: limits.maxFiles + maxFields,
      },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        form.files.push({ field: part.fieldname, filename: part.filename, mimetype: part.mimetype, data });
        continue;
      }
      if (part.valueTruncated) {
        throw new GatewayError(
          'payload_too_large',
          `form field ${part.fieldname} is longer than ${maxFieldBytes} bytes`,
        );
      }
      // A part sent as application/json arrives parsed (@fastify/multipart): kept as its JSON text.
      const value = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
      const list = form.fields.get(part.fieldname);
      if (list) list.push(value);
      else form.fields.set(part.fieldname, [value]);
    }
  } catch (err) {
    throw formError(err, limits, maxFields);
  }
  return form;
}

function formError(err: unknown, limits: FormLimits, maxFields: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: unknown }).code;
  const tooLarge = (message: string) =>
    new GatewayError('payload_too_large', message, { headers: { connection: 'close' } });
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(`a file in the form is larger than ${limits.maxFileBytes / MB} MB`);
    case 'FST_FILES_LIMIT':
      return tooLarge(`the form has more than ${limits.maxFiles} file(s)`);
    case 'FST_FIELDS_LIMIT':
      return tooLarge(`the form has more than ${maxFields} fields`);
    case 'FST_PARTS_LIMIT':
      return tooLarge('the form has too many parts');
    case 'FST_PROTO_VIOLATION':
      return new GatewayError('invalid_request', 'a form field name is not allowed');
    default:
      return new GatewayError(
        'invalid_request',
        `the multipart/form-data body could not be read: ${err instanceof Error ? err.message : String(err)}`,
      );
  }
}
