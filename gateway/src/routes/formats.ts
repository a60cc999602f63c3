// Every inference route family besides `/v1`: `/compat-a` (OpenAI), the native formats (`/anthropic`, `/genai`,
// `/cloudconv`, `/cohere`), and the framework mounts (`/aggregator`, `/langchain`, `/pydanticai`), which serve
// every format again under their prefix: OpenAI's at `<mount>/v1` and `<mount>/compat-a/v1`, a native format at
// `<mount>/<segment>`. Each family answers errors in its format's shape and takes its SDK's credential carrier.
import type { FastifyInstance } from 'fastify';
import { openaiFormat } from '../formats/openai/format.ts';
import type { WireFormat } from '../formats/types.ts';
import { registerFamily } from '../http/route-family.ts';
import { REALTIME_KEY_SUBPROTOCOL } from '../realtime/websocket.ts';
import type { Runtime } from '../runtime.ts';
import { registerCompatRoutes } from './compat-a.ts';
import { anthropicRoutes } from './native/anthropic.ts';
import { cloudconvRoutes } from './native/cloudconv.ts';
import { cohereRoutes } from './native/cohere.ts';
import { genaiRoutes } from './native/genai.ts';
import type { NativeRoutes } from './native/native-routes.ts';

const NATIVE: readonly NativeRoutes[] = [anthropicRoutes, genaiRoutes, cloudconvRoutes, cohereRoutes];

/** The framework-integration prefixes: each mounts every format. */
export const FRAMEWORK_MOUNTS = ['aggregator', 'langchain', 'pydanticai'] as const;

/** Azure's OpenAI client sends its key in `api-key`; a browser's realtime WebSocket in a subprotocol. */
const OPENAI_CARRIERS = { headers: ['api-key'], subprotocol: REALTIME_KEY_SUBPROTOCOL };

export function registerFormatFamilies(app: FastifyInstance, rt: Runtime): void {
  const openai = (prefix: string, operationIdPrefix?: string) =>
    registerFamily(
      app,
      rt,
      { scheme: 'inference', prefix, format: openaiFormat, carriers: OPENAI_CARRIERS, ...idPrefix(operationIdPrefix) },
      (f) => registerCompatRoutes(f, rt),
    );
  const native = (n: NativeRoutes, prefix: string, operationIdPrefix?: string) =>
    registerFamily(
      app,
      rt,
      {
        scheme: 'inference',
        prefix,
        format: n.format,
        ...(n.carriers ? { carriers: n.carriers } : {}),
        ...idPrefix(operationIdPrefix),
      },
      (f) => n.register(f, rt),
    );
  openai('/compat-a', 'compatA');
  for (const n of NATIVE) native(n, `/${n.segment}`);
  for (const mount of FRAMEWORK_MOUNTS) {
    openai(`/${mount}`, mount);
    openai(`/${mount}/compat-a`, `${mount}CompatA`);
    for (const n of NATIVE) native(n, `/${mount}/${n.segment}`, mount);
  }
}

/**
 * The wire format of the family a path belongs to, by its prefix, for the few errors fastify answers before a
 * route (and so its family) is known: a path parameter longer than the router takes (414). Authentication never
 * reads this: it belongs to the matched route.
 */
export function formatOfPath(path: string): WireFormat | undefined {
  let best: { prefix: string; format: WireFormat } | undefined;
  for (const f of FAMILY_FORMATS) {
    if ((path === f.prefix || path.startsWith(`${f.prefix}/`)) && f.prefix.length > (best?.prefix.length ?? 0)) {
      best = f;
    }
  }
  return best?.format;
}

const FAMILY_FORMATS: readonly { prefix: string; format: WireFormat }[] = [
  { prefix: '/compat-a', format: openaiFormat },
  ...NATIVE.map((n) => ({ prefix: `/${n.segment}`, format: n.format })),
  ...FRAMEWORK_MOUNTS.flatMap((m) => [
    { prefix: `/${m}`, format: openaiFormat },
    ...NATIVE.map((n) => ({ prefix: `/${m}/${n.segment}`, format: n.format })),
  ]),
];

function idPrefix(p: string | undefined): { operationIdPrefix?: string } {
  return p ? { operationIdPrefix: p } : {};
}
