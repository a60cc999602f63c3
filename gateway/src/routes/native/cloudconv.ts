// `/cloudconv`: the Bedrock runtime API (Converse, InvokeModel, CountTokens).
import { converseFormat } from '../../formats/converse/format.ts';
import type { NativeRoutes } from './native-routes.ts';

export const cloudconvRoutes: NativeRoutes = {
  segment: 'cloudconv',
  format: converseFormat,
  register() {},
};
