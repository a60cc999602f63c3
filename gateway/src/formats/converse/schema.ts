// The Bedrock runtime request bodies as the gateway checks them (Converse, CountTokens, InvokeModel) and the
// answers' shapes for the API document. Every object is loose: a pass-through keeps fields the gateway does not
// read, and Bedrock adds block types often. A block or union member must set exactly one member, as in Bedrock.
import { z } from 'zod';
import { ExtraFieldsSchema } from '../../schemas/errors.ts';

const CachePoint = z.looseObject({ type: z.literal('default') });

/** Blobs travel base64 in Bedrock's JSON protocol. */
const Bytes = z.base64();

const GuardContent = z.looseObject({
  text: z.looseObject({ text: z.string(), qualifiers: z.array(z.string()).optional() }),
});

const S3Location = z.looseObject({ uri: z.string().min(1), bucketOwner: z.string().optional() });

const ImageBlock = z.looseObject({
  format: z.enum(['jpeg', 'png', 'gif', 'webp']),
  source: z.looseObject({ bytes: Bytes.optional(), s3Location: S3Location.optional() }),
});

const DocumentBlock = z.looseObject({
  format: z.enum(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']).optional(),
  name: z.string().min(1).max(200),
  source: z.looseObject({
    bytes: Bytes.optional(),
    text: z.string().optional(),
    s3Location: S3Location.optional(),
    content: z.array(z.looseObject({ text: z.string() })).optional(),
  }),
});

const ToolUseBlock = z.looseObject({
  toolUseId: z.string().min(1).max(64),
  name: z.string().min(1).max(64),
  input: z.record(z.string(), z.unknown()),
});

/** Exactly one member set: Bedrock's unions (content blocks, tool choice) refuse zero or several. */
function oneMember(what: string) {
  return (value: Record<string, unknown>, ctx: z.core.$RefinementCtx<Record<string, unknown>>) => {
    const members = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null);
    if (members.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} must set exactly one member (it sets ${members.length === 0 ? 'none' : members.join(', ')})`,
      });
    }
  };
}

const ToolResultContent = z
  .looseObject({
    text: z.string().optional(),
    image: ImageBlock.optional(),
    document: DocumentBlock.optional(),
    json: z.unknown().optional(),
  })
  .superRefine(oneMember('a tool result content block'));

const ToolResultBlock = z.looseObject({
  toolUseId: z.string().min(1).max(64),
  content: z.array(ToolResultContent),
  status: z.enum(['success', 'error']).optional(),
});

const ReasoningContent = z.looseObject({
  reasoningText: z.looseObject({ text: z.string(), signature: z.string().optional() }).optional(),
  redactedContent: Bytes.optional(),
});

export const ContentBlock = z
  .looseObject({
    text: z.string().optional(),
    image: ImageBlock.optional(),
    document: DocumentBlock.optional(),
    toolUse: ToolUseBlock.optional(),
    toolResult: ToolResultBlock.optional(),
    guardContent: GuardContent.optional(),
    reasoningContent: ReasoningContent.optional(),
    json: z.record(z.string(), z.unknown()).optional(),
    cachePoint: CachePoint.optional(),
  })
  .superRefine(oneMember('a content block'));
export type ContentBlock = z.infer<typeof ContentBlock>;

export const Message = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.array(ContentBlock).min(1),
});
export type Message = z.infer<typeof Message>;

export const SystemBlock = z
  .looseObject({
    text: z.string().optional(),
    guardContent: GuardContent.optional(),
    cachePoint: CachePoint.optional(),
  })
  .superRefine(oneMember('a system block'));
export type SystemBlock = z.infer<typeof SystemBlock>;

const ToolSpec = z.looseObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a tool name is 1 to 64 letters, digits, underscores or hyphens'),
  description: z.string().min(1).optional(),
  inputSchema: z.looseObject({ json: z.record(z.string(), z.unknown()) }),
});

const Tool = z
  .looseObject({ toolSpec: ToolSpec.optional(), cachePoint: CachePoint.optional() })
  .superRefine(oneMember('a tool'));

const ToolChoice = z
  .looseObject({
    auto: z.looseObject({}).optional(),
    any: z.looseObject({}).optional(),
    tool: z.looseObject({ name: z.string().min(1).max(64) }).optional(),
  })
  .superRefine((value, ctx) => {
    const set = (['auto', 'any', 'tool'] as const).filter((k) => value[k] !== undefined);
    const other = Object.keys(value).filter((k) => k !== 'auto' && k !== 'any' && k !== 'tool');
    if (set.length !== 1 || other.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `toolChoice must set exactly one of auto, any, tool (it sets ${[...set, ...other].join(', ') || 'none'})`,
      });
    }
  });

export const ToolConfig = z.looseObject({ tools: z.array(Tool).min(1), toolChoice: ToolChoice.optional() });
export type ToolConfig = z.infer<typeof ToolConfig>;

export const InferenceConfig = z.looseObject({
  maxTokens: z.int().min(1).max(1_000_000).optional(),
  temperature: z.number().min(0).max(1).optional(),
  topP: z.number().min(0).max(1).optional(),
  stopSequences: z.array(z.string().min(1)).max(2500).optional(),
});

const ServiceTier = z.looseObject({ type: z.enum(['reserved', 'priority', 'default', 'flex']) });
const PerformanceConfig = z.looseObject({ latency: z.enum(['standard', 'optimized']) });

/** The body of Converse and ConverseStream (the model id is in the path). */
export const ConverseRequest = z
  .looseObject({
    messages: z.array(Message).optional(),
    system: z.array(SystemBlock).optional(),
    inferenceConfig: InferenceConfig.optional(),
    toolConfig: ToolConfig.optional(),
    guardrailConfig: z
      .looseObject({
        guardrailIdentifier: z.string().min(1),
        guardrailVersion: z.string().min(1),
        trace: z.enum(['enabled', 'disabled', 'enabled_full']).optional(),
        streamProcessingMode: z.enum(['sync', 'async']).optional(),
      })
      .optional(),
    additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
    additionalModelResponseFieldPaths: z.array(z.string().min(1)).max(10).optional(),
    performanceConfig: PerformanceConfig.optional(),
    promptVariables: z.record(z.string(), z.looseObject({ text: z.string() })).optional(),
    requestMetadata: z.record(z.string().min(1).max(256), z.string().max(256)).optional(),
    serviceTier: ServiceTier.optional(),
    outputConfig: z.looseObject({}).optional(),
    /** The gateway's: models tried in order when the primary fails; never sent upstream. */
    fallbacks: z.array(z.string().min(1).max(2048)).max(10).optional(),
  })
  .meta({ id: 'ConverseRequest' });
export type ConverseRequest = z.infer<typeof ConverseRequest>;

/** CountTokens: the input as Converse or as an InvokeModel body (a JSON string). */
export const CountTokensRequest = z
  .looseObject({
    input: z
      .looseObject({
        converse: z
          .looseObject({
            messages: z.array(Message).min(1),
            system: z.array(SystemBlock).optional(),
            toolConfig: ToolConfig.optional(),
            additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
          })
          .optional(),
        invokeModel: z.looseObject({ body: z.string().min(1) }).optional(),
      })
      .superRefine(oneMember('input')),
  })
  .meta({ id: 'ConverseCountTokensRequest' });
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;

/** InvokeModel: the model family's own JSON body, passed through. */
export const InvokeRequest = z.record(z.string(), z.unknown()).meta({ id: 'InvokeModelRequest' });

const TokenUsage = z.looseObject({
  inputTokens: z.int(),
  outputTokens: z.int(),
  totalTokens: z.int(),
  cacheReadInputTokens: z.int().optional(),
  cacheWriteInputTokens: z.int().optional(),
});

export const ConverseResponseView = z
  .looseObject({
    output: z.looseObject({
      message: z.looseObject({ role: z.string(), content: z.array(z.looseObject({})) }).optional(),
    }),
    stopReason: z.string(),
    usage: TokenUsage,
    metrics: z.looseObject({ latencyMs: z.int() }),
    additionalModelResponseFields: z.looseObject({}).optional(),
    trace: z.looseObject({}).optional(),
    performanceConfig: PerformanceConfig.optional(),
    serviceTier: ServiceTier.optional(),
    extra_fields: ExtraFieldsSchema.optional(),
  })
  .meta({ id: 'ConverseResponse' });

export const CountTokensView = z.looseObject({ inputTokens: z.int() }).meta({ id: 'ConverseTokenCount' });

export const InvokeResponseView = z
  .record(z.string(), z.unknown())
  .describe("the model family's own JSON answer, as Bedrock sent it")
  .meta({ id: 'InvokeModelResponse' });

export const ErrorView = z
  .strictObject({ message: z.string(), type: z.string().describe('the AWS exception name, also in x-amzn-errortype') })
  .meta({ id: 'ConverseError' });
