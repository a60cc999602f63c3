// `/anthropic`: the Messages API.
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import type { NativeRoutes } from './native-routes.ts';

export const anthropicRoutes: NativeRoutes = {
  segment: 'anthropic',
  format: anthropicFormat,
  register() {},
};
