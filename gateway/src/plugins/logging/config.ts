// The logging plugin's settings. `enabled` of the plugin row is the reference gateway's `enable_logging`.
import { z } from 'zod';

export const LoggingConfig = z.strictObject({
  /** Only metadata is stored (model, status, tokens, cost, latency, keys, owners): no request or response bodies. */
  disable_content_logging: z.boolean().default(false),
});
export type LoggingConfig = z.infer<typeof LoggingConfig>;
