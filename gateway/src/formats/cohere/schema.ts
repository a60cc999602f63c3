// The Cohere wire format's request and answer schemas (API v2 chat, embed, rerank; v1 tokenize). Requests are
// loose: the gateway validates the fields it reads and keeps the rest for a same-format pass-through.
import { z } from 'zod';

const Text = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageUrl = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const Thinking = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
/** A grounding document: a string, or `{data, id?}` with `data` a string or an object of fields. */
export const Document = z.union([
  z.string(),
  z.looseObject({
    id: z.string().optional(),
    data: z.union([z.string(), z.record(z.string(), z.unknown())]),
  }),
]);
export type Document = z.infer<typeof Document>;
const DocumentPart = z.looseObject({ type: z.literal('document'), document: Document });

const ToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

export const Message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: z.union([z.string(), z.array(Text)]) }),
  z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [Text, ImageUrl, DocumentPart]))]),
  }),
  z.looseObject({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [Text, Thinking]))]).nullish(),
    tool_plan: z.string().nullish(),
    tool_calls: z.array(ToolCall).nullish(),
  }),
  z.looseObject({
    role: z.literal('tool'),
    tool_call_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [Text, DocumentPart]))]),
  }),
]);
export type Message = z.infer<typeof Message>;

const Tool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const ResponseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object'), json_schema: z.record(z.string(), z.unknown()).optional() }),
]);

const Model = z.string().min(1).max(512);

export const ChatRequest = z.looseObject({
  model: Model,
  messages: z.array(Message).min(1),
  stream: z.boolean().nullish(),
  tools: z.array(Tool).nullish(),
  strict_tools: z.boolean().nullish(),
  tool_choice: z.enum(['REQUIRED', 'NONE']).nullish(),
  documents: z.array(Document).nullish(),
  response_format: ResponseFormat.nullish(),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  p: z.number().min(0).max(1).nullish(),
  k: z.number().int().min(0).max(500).nullish(),
  stop_sequences: z.array(z.string()).max(16).nullish(),
  seed: z.number().int().nullish(),
  frequency_penalty: z.number().min(0).max(1).nullish(),
  presence_penalty: z.number().min(0).max(1).nullish(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

export const EMBEDDING_TYPES = ['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'] as const;
export const INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering', 'image'] as const;

export const EmbedRequest = z.looseObject({
  model: Model,
  texts: z.array(z.string()).min(1).max(96).nullish(),
  images: z.array(z.string()).min(1).nullish(),
  inputs: z.array(z.record(z.string(), z.unknown())).min(1).nullish(),
  input_type: z.enum(INPUT_TYPES),
  embedding_types: z.array(z.enum(EMBEDDING_TYPES)).min(1).nullish(),
  output_dimension: z.number().int().positive().nullish(),
  truncate: z.enum(['NONE', 'START', 'END']).nullish(),
});
export type EmbedRequest = z.infer<typeof EmbedRequest>;

export const RerankRequest = z.looseObject({
  model: Model,
  query: z.string().min(1),
  documents: z.array(z.string()).min(1).max(10_000),
  top_n: z.number().int().positive().nullish(),
  max_tokens_per_doc: z.number().int().positive().nullish(),
});
export type RerankRequest = z.infer<typeof RerankRequest>;

export const TokenizeRequest = z.looseObject({ model: Model, text: z.string().min(1).max(65_536) });
export type TokenizeRequest = z.infer<typeof TokenizeRequest>;

// Answers, as documented in /openapi.json (loose: Cohere adds fields over time and they are passed on).

const ExtraFields = z.record(z.string(), z.unknown()).describe('The gateway’s additions (provider, models used)');

const Usage = z.looseObject({
  billed_units: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
  tokens: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
  cached_tokens: z.number().optional(),
});

export const ChatView = z.looseObject({
  id: z.string(),
  finish_reason: z.string(),
  message: z.looseObject({
    role: z.literal('assistant'),
    content: z.array(z.looseObject({ type: z.string() })).optional(),
    tool_plan: z.string().optional(),
    tool_calls: z.array(ToolCall).optional(),
  }),
  usage: Usage.optional(),
  extra_fields: ExtraFields.optional(),
});

const Meta = z.looseObject({ billed_units: z.record(z.string(), z.unknown()).optional() });

export const EmbedView = z.looseObject({
  id: z.string(),
  embeddings: z.record(z.string(), z.array(z.unknown())),
  texts: z.array(z.string()).optional(),
  meta: Meta.optional(),
  response_type: z.string().optional(),
  extra_fields: ExtraFields.optional(),
});

export const RerankView = z.looseObject({
  id: z.string().optional(),
  results: z.array(z.looseObject({ index: z.number().int(), relevance_score: z.number() })),
  meta: Meta.optional(),
  extra_fields: ExtraFields.optional(),
});

export const TokenizeView = z.looseObject({
  tokens: z.array(z.number().int()),
  token_strings: z.array(z.string()).optional(),
  meta: Meta.optional(),
  extra_fields: ExtraFields.optional(),
});

export const ErrorView = z.looseObject({ id: z.string().optional(), message: z.string() });
