// Shared setup of the tool-injection end-to-end tests (mcp-injection*.test.ts): a real gateway (Postgres + Redis)
// with openai, anthropic and gemini pointed at their fakes (every openai output token priced, so each step has a
// cost), two MCP SDK tool servers created through /api/mcp/client, and two virtual keys: one granted the files
// tools (auto-executing read and fail), one with no mcp_configs at all.
import { beforeEach } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, pc } from './governance-helpers.ts';
import { addMcpClient, openaiProvider, startFilesServer, startMcpGateway, useEnv } from './mcp-helpers.ts';

export const MODEL = 'openai/gpt-4o-mini';

export interface InjectionEnv {
  gw: TestGateway;
  openai: OpenAIFake;
  anthropic: AnthropicFake;
  gemini: GeminiFake;
  /** read, write, delete, fail; the client's ceiling leaves out delete and auto-executes read and fail. */
  files: McpToolServer;
  /** search, over SSE. */
  web: McpToolServer;
  /** files: read, write, fail (auto: read, fail); no web tools. */
  keyA: { id: string; value: string; view: Json };
  /** No mcp_configs at all. */
  keyB: { id: string; value: string; view: Json };
  /** Forgets what the fakes and the files server recorded (before each test). */
  reset(): void;
  close(): Promise<void>;
}

export async function startInjectionEnv(): Promise<InjectionEnv> {
  const [openai, anthropic, gemini, files, web] = await Promise.all([
    createOpenAIFake().start(),
    createAnthropicFake().start(),
    createGeminiFake().start(),
    startFilesServer(),
    startMcpToolServer({ transport: 'sse', tools: [echoTool('search')] }),
  ]);
  const gw = await startMcpGateway({
    providers: {
      ...openaiProvider(openai.url),
      anthropic: {
        network_config: { base_url: anthropic.url, max_retries: 0 },
        keys: [{ id: 'a1', name: 'anthropic-one', value: 'sk-ant-aaaaaaaaaaaaaaaa', models: ['*'] }],
      },
      gemini: {
        network_config: { base_url: gemini.url, max_retries: 0 },
        keys: [{ id: 'g1', name: 'gemini-one', value: 'gm-key-aaaaaaaaaaaaaaaa', models: ['*'] }],
      },
    },
  });
  // Every output token costs 0.0025 USD, so each step has a cost of its own.
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: 0.0025,
  });
  await addMcpClient(gw, {
    name: 'files',
    connection_type: 'http',
    connection_string: files.url,
    // The client's own ceiling: `delete` is never executable, whatever a key says.
    tools_to_execute: ['read', 'write', 'fail'],
    tools_to_auto_execute: ['read', 'fail'],
  });
  await addMcpClient(gw, { name: 'web', connection_type: 'sse', connection_string: web.url });
  const keyA = await createVk(gw, {
    provider_configs: [pc('openai'), pc('anthropic'), pc('gemini')],
    budgets: [{ max_limit: 1000, reset_duration: '1d' }],
    mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['*'], tools_to_auto_execute: ['read', 'fail'] }],
  });
  const keyB = await createVk(gw, { provider_configs: [pc('openai')] });
  return {
    gw,
    openai,
    anthropic,
    gemini,
    files,
    web,
    keyA,
    keyB,
    reset() {
      openai.reset();
      anthropic.reset();
      gemini.reset();
      files.calls.length = 0;
    },
    async close() {
      await gw.close();
      await Promise.all([openai.stop(), anthropic.stop(), gemini.stop(), files.close(), web.close()]);
    },
  };
}

/** The environment of the calling test file (useEnv), its recordings reset before each test. */
export function useInjectionEnv(): InjectionEnv {
  const env = useEnv(startInjectionEnv);
  beforeEach(() => env.reset());
  return env;
}

/** The names of the tools in a chat or Responses request body. */
export const toolNames = (b: Json): unknown[] =>
  ((b['tools'] as Json[] | undefined) ?? []).map((t) => (t['function'] as Json | undefined)?.['name'] ?? t['name']);
