// Images at their OpenAI paths (every OpenAI-format mount): generations, edits, variations. Each is one inference
// route: governance, key selection, retries, logs and metrics come with it.
import type { FastifyInstance } from 'fastify';
import { imageOperations } from '../../formats/openai/images.ts';
import type { WireFormat } from '../../formats/types.ts';
import type { Runtime } from '../../runtime.ts';
import { registerInferenceRoute } from '../inference-route.ts';

export function registerImageRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  const ops = imageOperations(format);
  registerInferenceRoute(app, rt, '/images/generations', ops.generations);
  registerInferenceRoute(app, rt, '/images/edits', ops.edits);
  registerInferenceRoute(app, rt, '/images/variations', ops.variations);
}
