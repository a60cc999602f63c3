// Audio at its OpenAI paths (every OpenAI-format mount), rerank and OCR (the unified `/v1` only: neither is an
// OpenAI API). Each is one inference route: governance, key selection, retries, logs and metrics come with it.
import type { FastifyInstance } from 'fastify';
import { audioOperations } from '../../formats/openai/audio.ts';
import { ocrOperation } from '../../formats/openai/ocr.ts';
import { rerankOperation } from '../../formats/openai/rerank.ts';
import type { WireFormat } from '../../formats/types.ts';
import type { Runtime } from '../../runtime.ts';
import { registerInferenceRoute } from '../inference-route.ts';

export function registerAudioRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  const ops = audioOperations(format);
  registerInferenceRoute(app, rt, '/audio/speech', ops.speech);
  registerInferenceRoute(app, rt, '/audio/transcriptions', ops.transcriptions);
  registerInferenceRoute(app, rt, '/audio/translations', ops.translations);
}

export function registerRerankOcrRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  registerInferenceRoute(app, rt, '/rerank', rerankOperation(format));
  registerInferenceRoute(app, rt, '/ocr', ocrOperation(format));
}
