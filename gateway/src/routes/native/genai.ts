// `/genai`: the Gemini API.
import { genaiFormat } from '../../formats/genai/format.ts';
import type { NativeRoutes } from './native-routes.ts';

export const genaiRoutes: NativeRoutes = {
  segment: 'genai',
  format: genaiFormat,
  carriers: { headers: ['x-goog-api-key'], query: 'key' },
  register() {},
};
