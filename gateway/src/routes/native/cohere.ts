// `/cohere`: Cohere v2 chat, embed, rerank and v1 tokenize.
import { cohereFormat } from '../../formats/cohere/format.ts';
import type { NativeRoutes } from './native-routes.ts';

export const cohereRoutes: NativeRoutes = {
  segment: 'cohere',
  format: cohereFormat,
  register() {},
};
