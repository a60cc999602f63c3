// What the inference routes answer, as schemas for the API document. The answers are OpenAI wire format
// translated from each provider's, so the schemas name what every answer carries and leave the rest open
// (providers add fields; the gateway passes them through).
import { z } from 'zod';
import { ExtraFieldsSchema } from './errors.ts';

const Usage = z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

export const ModelListView = z
  .strictObject({
    object: z.literal('list'),
    data: z.array(
      z.strictObject({
        id: z.string().describe('<provider>/<model>'),
        object: z.literal('model'),
        created: z.int(),
        owned_by: z.string(),
      }),
    ),
  })
  .meta({ id: 'ModelList' });

export const ModelsQuery = z.object({ provider: z.string().optional().describe('only this provider’s models') });

export const ChatCompletionView = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.int(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: z.string().nullable(),
      }),
    ),
    usage: Usage.optional(),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'ChatCompletion' });

export const TextCompletionView = z
  .looseObject({
    id: z.string(),
    object: z.literal('text_completion'),
    created: z.number(),
    model: z.string(),
    choices: z.array(z.looseObject({ index: z.int(), text: z.string(), finish_reason: z.string().nullable() })),
    usage: Usage.nullable().optional(),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'TextCompletion' });

export const EmbeddingListView = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(
      z.looseObject({
        object: z.literal('embedding'),
        index: z.int(),
        embedding: z.union([z.array(z.number()), z.string().describe('base64 little-endian float32')]),
      }),
    ),
    model: z.string(),
    usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'EmbeddingList' });

export const ResponseView = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    model: z.string(),
    output: z.array(z.looseObject({ type: z.string() })),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'Response' });

export const CountTokensView = z
  .looseObject({
    object: z.literal('response.input_tokens'),
    input_tokens: z.int(),
    model: z.string(),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'InputTokens' });
