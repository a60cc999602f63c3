// The shared base of every OpenAI-style provider: given where it lives (endpoints) and which operations it has,
// build the adapter. Operations not listed stay absent, which the engine reports as `unsupported_operation`.
import type { Operation, ProviderAdapter } from '../types.ts';
import { speech, speechStream, transcribe, transcriptionStream } from './audio.ts';
import { chat, chatStream } from './chat.ts';
import { textCompletion, textCompletionStream } from './completions.ts';
import { countTokens } from './count-tokens.ts';
import { embeddings } from './embeddings.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { imageEdit, imageEditStream, imageGeneration, imageGenerationStream, imageVariation } from './images.ts';
import { listModels } from './models.ts';
import { responses, responsesStream } from './responses.ts';

export function createOpenAIStyleAdapter(
  name: string,
  ep: OpenAIStyleEndpoints,
  operations: readonly Operation[],
): ProviderAdapter {
  const has = new Set(operations);
  const a: ProviderAdapter = { name };
  if (has.has('list_models')) a.listModels = (ctx) => listModels(ep, name, ctx);
  if (has.has('chat')) a.chat = (req, ctx) => chat(ep, req, ctx);
  if (has.has('chat_stream')) a.chatStream = (req, ctx) => chatStream(ep, req, ctx);
  if (has.has('text_completion')) a.textCompletion = (req, ctx) => textCompletion(ep, req, ctx);
  if (has.has('text_completion_stream')) a.textCompletionStream = (req, ctx) => textCompletionStream(ep, req, ctx);
  if (has.has('embeddings')) a.embeddings = (req, ctx) => embeddings(ep, req, ctx);
  if (has.has('responses')) a.responses = (req, ctx) => responses(ep, req, ctx);
  if (has.has('responses_stream')) a.responsesStream = (req, ctx) => responsesStream(ep, req, ctx);
  if (has.has('count_tokens')) a.countTokens = (req, ctx) => countTokens(ep, req, ctx);
  if (has.has('speech')) a.speech = (req, ctx) => speech(ep, req, ctx);
  if (has.has('speech_stream')) a.speechStream = (req, ctx) => speechStream(ep, req, ctx);
  if (has.has('transcription')) a.transcription = (req, ctx) => transcribe(ep, 'transcriptions', req, ctx);
  if (has.has('transcription_stream')) a.transcriptionStream = (req, ctx) => transcriptionStream(ep, req, ctx);
  if (has.has('translation')) a.translation = (req, ctx) => transcribe(ep, 'translations', req, ctx);
  if (has.has('image_generation')) a.imageGeneration = (req, ctx) => imageGeneration(ep, req, ctx);
  if (has.has('image_generation_stream')) a.imageGenerationStream = (req, ctx) => imageGenerationStream(ep, req, ctx);
  if (has.has('image_edit')) a.imageEdit = (req, ctx) => imageEdit(ep, req, ctx);
  if (has.has('image_edit_stream')) a.imageEditStream = (req, ctx) => imageEditStream(ep, req, ctx);
  if (has.has('image_variation')) a.imageVariation = (req, ctx) => imageVariation(ep, req, ctx);
  return a;
}
