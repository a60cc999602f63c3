// The Gemini API request and answer bodies (`/genai`), as zod schemas: loose objects, so fields the gateway does
// not read (safetySettings, cachedContent, labels, new ones) pass through to a Gemini upstream unchanged. They
// check what a translation reads and what a caller most often gets wrong, and document the routes.
import { z } from 'zod';

const Blob = z.looseObject({ mimeType: z.string().min(1), data: z.string() });

export const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: Blob.optional(),
  fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: z.string().min(1) }).optional(),
  functionCall: z
    .looseObject({
      id: z.string().optional(),
      name: z.string().min(1),
      args: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  functionResponse: z
    .looseObject({ id: z.string().optional(), name: z.string().min(1), response: z.record(z.string(), z.unknown()) })
    .optional(),
});
export type Part = z.infer<typeof Part>;

export const Content = z.looseObject({
  role: z.enum(['user', 'model']).optional(),
  parts: z.array(Part).min(1),
});
export type Content = z.infer<typeof Content>;

const Schema = z.record(z.string(), z.unknown());

export const FunctionDeclaration = z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  parameters: Schema.optional(),
  parametersJsonSchema: Schema.optional(),
});

export const Tool = z.looseObject({ functionDeclarations: z.array(FunctionDeclaration).optional() });

export const GenerationConfig = z.looseObject({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  candidateCount: z.number().int().positive().max(8).optional(),
  stopSequences: z.array(z.string()).max(5).optional(),
  seed: z.number().int().optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  responseMimeType: z.string().optional(),
  responseSchema: Schema.optional(),
  responseJsonSchema: Schema.optional(),
  thinkingConfig: z
    .looseObject({
      includeThoughts: z.boolean().optional(),
      thinkingBudget: z.number().int().min(-1).optional(),
      thinkingLevel: z.string().optional(),
    })
    .optional(),
});

export const GenerateContentRequest = z.looseObject({
  /** Ignored beside the path's model; the SDKs do not send it. */
  model: z.string().optional(),
  contents: z.array(Content).min(1),
  systemInstruction: z.union([Content.extend({ parts: z.array(Part) }), z.string()]).optional(),
  tools: z.array(Tool).optional(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({
          mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED', 'MODE_UNSPECIFIED']).optional(),
          allowedFunctionNames: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  generationConfig: GenerationConfig.optional(),
  safetySettings: z.array(z.unknown()).optional(),
  cachedContent: z.string().optional(),
});
export type GenerateContentRequest = z.infer<typeof GenerateContentRequest>;

export const EmbedContentRequest = z.looseObject({
  model: z.string().optional(),
  content: Content.extend({ parts: z.array(Part).min(1) }),
  taskType: z.string().optional(),
  title: z.string().optional(),
  outputDimensionality: z.number().int().positive().optional(),
});
export type EmbedContentRequest = z.infer<typeof EmbedContentRequest>;

export const BatchEmbedContentsRequest = z.looseObject({
  requests: z.array(EmbedContentRequest).min(1).max(250),
});
export type BatchEmbedContentsRequest = z.infer<typeof BatchEmbedContentsRequest>;

export const CountTokensRequest = z.looseObject({
  contents: z.array(Content).optional(),
  generateContentRequest: GenerateContentRequest.optional(),
});
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;

// Answers, for the API document.

export const UsageMetadata = z.looseObject({
  promptTokenCount: z.number().int().optional(),
  candidatesTokenCount: z.number().int().optional(),
  totalTokenCount: z.number().int().optional(),
  cachedContentTokenCount: z.number().int().optional(),
  thoughtsTokenCount: z.number().int().optional(),
});

export const GenerateContentResponse = z
  .looseObject({
    candidates: z
      .array(
        z.looseObject({
          content: z.looseObject({ role: z.string().optional(), parts: z.array(Part).optional() }).optional(),
          finishReason: z.string().optional(),
          index: z.number().int().optional(),
        }),
      )
      .optional(),
    usageMetadata: UsageMetadata.optional(),
    modelVersion: z.string().optional(),
    responseId: z.string().optional(),
  })
  .meta({ id: 'GenaiGenerateContentResponse' });

const Embedding = z.looseObject({ values: z.array(z.number()) });

export const ModelsCallResponse = z.union([
  GenerateContentResponse,
  z.array(GenerateContentResponse),
  z.looseObject({ embedding: Embedding }),
  z.looseObject({ embeddings: z.array(Embedding) }),
  z.looseObject({ totalTokens: z.number().int() }),
]);

export const GenaiModel = z.looseObject({
  name: z.string(),
  displayName: z.string().optional(),
  supportedGenerationMethods: z.array(z.string()).optional(),
});

export const GenaiModelList = z.object({ models: z.array(GenaiModel), nextPageToken: z.string().optional() });

export const GoogleErrorBody = z
  .object({ error: z.object({ code: z.number().int(), message: z.string(), status: z.string() }) })
  .meta({ id: 'GoogleError' });
