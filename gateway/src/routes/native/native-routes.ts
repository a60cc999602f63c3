import type { FastifyInstance } from 'fastify';
import type { WireFormat } from '../../formats/types.ts';
import type { FamilyOptions } from '../../http/route-family.ts';
import type { Runtime } from '../../runtime.ts';

/** A native wire format's routes, mounted at `/<segment>` and again under each framework prefix. */
export interface NativeRoutes {
  /** `anthropic`, `genai`, `cloudconv`, `cohere`. */
  segment: string;
  format: WireFormat;
  /** Where the format's SDK sends its key, besides the spec's schemes. */
  carriers?: FamilyOptions['carriers'];
  /** Registers the routes relative to the mount (`/v1/messages`). */
  register(f: FastifyInstance, rt: Runtime): void;
}
