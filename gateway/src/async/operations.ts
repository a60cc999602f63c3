// The operations `/v1/async/<operation>` takes: every model-bearing inference of `/v1` whose answer is one body
// (batches, files and containers are jobs of their own; videos are already a job with its own polling API).
// The table is shared by the routes (decode and admit) and the worker (decode again and run).
import { audioOperations } from '../formats/openai/audio.ts';
import { imageOperations } from '../formats/openai/images.ts';
import { ocrOperation } from '../formats/openai/ocr.ts';
import { openaiOperations } from '../formats/openai/operations.ts';
import { rerankOperation } from '../formats/openai/rerank.ts';
import type { FormatOperation, WireFormat } from '../formats/types.ts';

export type AnyOperation = FormatOperation<unknown, unknown, unknown>;

export interface AsyncOperation {
  /** The path after `/v1/async/` (and after `/v1/` on the synchronous route). */
  path: string;
  /** For operationIds: `createAsync<Name>`, `getAsync<Name>Job`. */
  name: string;
  /** What the job does, for the API document. */
  what: string;
  op: AnyOperation;
}

export function asyncOperations(format: WireFormat): AsyncOperation[] {
  const o = openaiOperations(format);
  const audio = audioOperations(format);
  const images = imageOperations(format);
  const any = (op: unknown): AnyOperation => op as AnyOperation; // each decodes its own Req; the table runs them opaquely
  return [
    { path: 'chat/completions', name: 'ChatCompletion', what: 'chat completion', op: any(o.chat) },
    { path: 'completions', name: 'TextCompletion', what: 'text completion', op: any(o.completions) },
    { path: 'responses', name: 'Response', what: 'response', op: any(o.responses) },
    { path: 'embeddings', name: 'Embedding', what: 'embedding', op: any(o.embeddings) },
    { path: 'audio/speech', name: 'Speech', what: 'speech synthesis', op: any(audio.speech) },
    { path: 'audio/transcriptions', name: 'Transcription', what: 'transcription', op: any(audio.transcriptions) },
    { path: 'audio/translations', name: 'Translation', what: 'audio translation', op: any(audio.translations) },
    { path: 'images/generations', name: 'ImageGeneration', what: 'image generation', op: any(images.generations) },
    { path: 'images/edits', name: 'ImageEdit', what: 'image edit', op: any(images.edits) },
    { path: 'images/variations', name: 'ImageVariation', what: 'image variation', op: any(images.variations) },
    { path: 'rerank', name: 'Rerank', what: 'rerank', op: any(rerankOperation(format)) },
    { path: 'ocr', name: 'Ocr', what: 'OCR', op: any(ocrOperation(format)) },
  ];
}
