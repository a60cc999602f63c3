// The gateway error envelope as a schema, for the API document (http/errors.ts builds it; a test checks that what
// toEnvelope builds is what this schema describes).
import { z } from 'zod';

/** Context of a failed request: provider, models, request type, and for inference the keys tried. Open-ended. */
export const ExtraFieldsSchema = z
  .looseObject({
    provider: z.string().optional(),
    original_model_requested: z.string().optional(),
    resolved_model_used: z.string().optional(),
    request_type: z.string().optional(),
  })
  .meta({ id: 'ExtraFields' });

export const ErrorEnvelopeSchema = z
  .strictObject({
    event_id: z.string().describe('The request id (also in the x-gateway-request-id header).'),
    type: z.string(),
    is_gateway_error: z.boolean().describe('false when the error is the upstream provider’s own answer'),
    status_code: z.int(),
    error: z.strictObject({
      type: z.string(),
      code: z.string(),
      message: z.string(),
      param: z.string().nullable(),
      event_id: z.string(),
    }),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ title: 'ErrorEnvelope' });
