// The Anthropic Messages request as the gateway checks it (the fields it reads or translates; every object is
// loose, so unknown fields and new block types pass through to Anthropic untouched), and the answers' shapes for
// the API document.
import { z } from 'zod';
import { ExtraFieldsSchema } from '../../schemas/errors.ts';
import { nameString } from '../../schemas/strings.ts';

const CacheControl = z.looseObject({ type: z.string() }).nullable().optional();

const Base64Source = z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() });
const UrlSource = z.looseObject({ type: z.literal('url'), url: z.string().min(1) });
const TextSource = z.looseObject({ type: z.literal('text'), media_type: z.string(), data: z.string() });
/** Sources the gateway does not translate (`file`, `content`) are checked only for their type. */
const CHECKED_SOURCES = new Set(['base64', 'url', 'text']);
const OtherSource = z.looseObject({
  type: z
    .string()
    .min(1)
    .refine((t) => !CHECKED_SOURCES.has(t), 'a base64, url or text source lacks its fields'),
});

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: CacheControl });
const ImageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.union([Base64Source, UrlSource, OtherSource]),
  cache_control: CacheControl,
});
const DocumentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.union([Base64Source, UrlSource, TextSource, OtherSource]),
  title: z.string().nullable().optional(),
  cache_control: CacheControl,
});
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl,
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string().min(1) }))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
});
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const KNOWN_BLOCKS: Record<string, z.ZodType> = {
  text: TextBlock,
  image: ImageBlock,
  document: DocumentBlock,
  tool_use: ToolUseBlock,
  tool_result: ToolResultBlock,
  thinking: ThinkingBlock,
  redacted_thinking: RedactedThinkingBlock,
};

/**
 * A content block: the types the gateway translates are checked in full; other types (server tools, search
 * results, ...) only need a `type`, since Anthropic adds them often and a pass-through must not refuse them.
 */
export const ContentBlock = z.looseObject({ type: z.string().min(1) }).superRefine((block, ctx) => {
  const schema = KNOWN_BLOCKS[block.type];
  if (!schema) return;
  const r = schema.safeParse(block);
  if (r.success) return;
  for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
});
export type ContentBlock = z.infer<typeof ContentBlock>;

const Message = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlock)]),
});

const System = z.union([z.string(), z.array(TextBlock)]);

/** Client tools carry `input_schema`; server tools (`web_search_20250305`, ...) carry their own `type`. */
const Tool = z.looseObject({
  name: z.string().min(1).max(128),
  type: z.string().nullable().optional(),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  cache_control: CacheControl,
});

const ToolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal('none') }),
]);

const Thinking = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.int().min(1) }),
  z.looseObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
]);

/** `model` is one line: it is logged, routed on and echoed in errors. */
const Model = nameString(256);

/** POST /v1/messages. */
export const MessagesRequest = z
  .looseObject({
    model: Model,
    messages: z.array(Message).min(1),
    max_tokens: z.int().min(1).max(1_000_000),
    system: System.optional(),
    stop_sequences: z.array(z.string()).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.int().min(0).optional(),
    tools: z.array(Tool).optional(),
    tool_choice: ToolChoice.optional(),
    thinking: Thinking.optional(),
    metadata: z.looseObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
  })
  .meta({ id: 'AnthropicMessagesRequest' });
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/** POST /v1/messages/count_tokens: a Messages request without `max_tokens`. */
export const CountTokensRequest = z
  .looseObject({
    model: Model,
    messages: z.array(Message).min(1),
    system: System.optional(),
    tools: z.array(Tool).optional(),
    tool_choice: ToolChoice.optional(),
    thinking: Thinking.optional(),
  })
  .meta({ id: 'AnthropicCountTokensRequest' });
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;

const Usage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number().nullable().optional(),
  cache_read_input_tokens: z.number().nullable().optional(),
});

export const MessageView = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    stop_sequence: z.string().nullable().optional(),
    usage: Usage,
    extra_fields: ExtraFieldsSchema.optional(),
  })
  .meta({ id: 'AnthropicMessage' });

export const CountTokensView = z
  .looseObject({ input_tokens: z.number(), extra_fields: ExtraFieldsSchema.optional() })
  .meta({ id: 'AnthropicTokenCount' });

export const ModelInfoView = z
  .strictObject({
    type: z.literal('model'),
    id: z.string().describe('a bare id for Anthropic models, <provider>/<model> for the others'),
    display_name: z.string(),
    created_at: z.string().describe('RFC 3339'),
  })
  .meta({ id: 'AnthropicModelInfo' });

export const ModelListView = z
  .strictObject({
    data: z.array(ModelInfoView),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  })
  .meta({ id: 'AnthropicModelList' });

export const ModelListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().describe('page size (default 20)'),
  after_id: z.string().max(512).optional(),
  before_id: z.string().max(512).optional(),
});

export const ErrorView = z
  .strictObject({
    type: z.literal('error'),
    error: z.strictObject({ type: z.string(), message: z.string() }),
    request_id: z.string().optional(),
  })
  .meta({ id: 'AnthropicError' });
