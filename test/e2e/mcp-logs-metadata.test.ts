// MCP tool logs carry the calling request's log metadata (client setting logging_headers and x-gateway-lh-*
// headers), through POST /v1/mcp/tool/execute, /mcp and the auto-execute loop, read back from /api/mcp-logs;
// credentials are never captured.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/wait.ts';
import { adminJson, type Json } from './governance-helpers.ts';
import { callTool } from './mcp-helpers.ts';
import { MODEL, useInjectionEnv } from './mcp-injection-helpers.ts';

const env = useInjectionEnv();

afterEach(async () => {
  await adminJson(env.gw, '/api/config', 'PUT', { client_config: {} });
  await adminJson(env.gw, '/api/mcp-logs', 'DELETE', { filters: { end_time: '2100-01-01T00:00:00Z' } });
});

async function execute(headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${env.gw.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-vk': env.keyA.value, ...headers },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name: 'files-read', arguments: '{}' } }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function onlyRow(): Promise<Json> {
  let rows: Json[] = [];
  await waitFor(
    async () => {
      rows = (await adminJson(env.gw, '/api/mcp-logs'))['logs'] as Json[];
      return rows.length > 0;
    },
    10_000,
    'the MCP tool log row',
  );
  expect(rows).toHaveLength(1);
  return rows[0] as Json;
}

describe('MCP tool log metadata', () => {
  it('configured headers and x-gateway-lh-* labels land in the row; the virtual key does not', async () => {
    await adminJson(env.gw, '/api/config', 'PUT', { client_config: { logging_headers: ['X-Team'] } });
    expect(await execute({ 'x-team': 'blue', 'x-gateway-lh-run': 'r-7' })).toBe(200);
    const row = await onlyRow();
    expect(row['metadata']).toEqual({ 'x-team': 'blue', run: 'r-7' });
    expect(JSON.stringify(row)).not.toContain(env.keyA.value);
  });

  it('a call without such headers has metadata null', async () => {
    expect(await execute({})).toBe(200);
    expect((await onlyRow())['metadata']).toBeNull();
  });

  it("/mcp and the auto-execute loop carry the calling request's metadata too", async () => {
    await adminJson(env.gw, '/api/config', 'PUT', { client_config: { logging_headers: ['X-Team'] } });
    expect(await callTool(env.gw, env.keyA.value, 'files-read', { 'x-team': 'green' })).toEqual({
      isError: false,
      text: 'read:{}',
    });
    expect((await onlyRow())['metadata']).toEqual({ 'x-team': 'green' });
    await adminJson(env.gw, '/api/mcp-logs', 'DELETE', { filters: { end_time: '2100-01-01T00:00:00Z' } });

    const sdk = new OpenAI({
      baseURL: `${env.gw.url}/v1`,
      apiKey: env.keyA.value,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-lh-run': 'r-9' },
    });
    await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'look it up' }] });
    expect((await onlyRow())['metadata']).toEqual({ run: 'r-9' });
  });
});
