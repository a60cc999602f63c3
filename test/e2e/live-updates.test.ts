import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../gateway/src/state/ids.ts';
import type { McpToolLog } from '../../gateway/src/state/services/mcp-log-rows.ts';
import { logEntry } from '../../gateway/test/plugins/log-entry.ts';
import { INFERENCE_TOKEN, startTestGateway } from '../harness/gateway.ts';
import { sleep, waitFor } from '../harness/wait.ts';
import { bearer, chat, createVk, type Json, pc, VK } from './governance-helpers.ts';
import {
  a,
  admin,
  b,
  closeAll,
  config,
  expectRefusal,
  fake,
  HEARTBEAT_MS,
  type Live,
  MAX_CLIENTS,
  next,
  open,
  refusal,
  useLivePods,
  wsUrl,
} from './live-helpers.ts';

useLivePods();

/** A stored MCP tool call's row, as the tool logger queues it. */
function toolCall(id: string): McpToolLog {
  return {
    id,
    created_at: Date.now(),
    llm_request_id: null,
    tool_name: 'lookup',
    server_label: 'docs',
    virtual_key_id: null,
    virtual_key_name: null,
    arguments: '{}',
    result: null,
    error: null,
    status: 'success',
    latency_ms: 3,
    cost_nano: null,
    metadata: null,
  };
}

const isLog = (id: string) => (m: Json) => m['type'] === 'log' && (m['payload'] as Json | undefined)?.['id'] === id;

describe('live updates across pods', () => {
  it('sends a client on pod B the log of a request pod A served, as GET /api/logs/{id} shows it', async () => {
    const live = await open(b, { headers: admin });
    const call = await chat(a, bearer(INFERENCE_TOKEN));
    expect(call.status).toBe(200);
    const id = String(call.headers.get('x-gateway-request-id'));
    const msg = await next(live, isLog(id));
    expect(msg).toMatchObject({ type: 'log', operation: 'create' });
    const row = (await (await b.admin(`/api/logs/${id}`)).json()) as Json;
    expect(msg['payload']).toEqual(row);
    expect(row).toMatchObject({ provider: 'openai', status: 'success', object: 'chat_completion' });
    await closeAll(b, live);
  });

  it('sends the newest 100 rows of a larger batch and one logs_skipped for the rest', async () => {
    const live = await open(b, { headers: admin });
    await a.rt.logWriter.flush();
    const ids = Array.from({ length: 150 }, () => timeOrderedId());
    for (const id of ids) a.rt.logWriter.push(logEntry(id));
    await a.rt.logWriter.flush();
    const last = ids.at(-1) ?? '';
    await next(live, isLog(last));
    await sleep(200);
    const logs = live.messages.filter((m) => m['type'] === 'log').map((m) => (m['payload'] as Json)['id']);
    expect(logs).toEqual(ids.slice(50));
    expect(live.messages.filter((m) => m['type'] === 'logs_skipped')).toEqual([
      { type: 'logs_skipped', count: 50, log_type: 'log' },
    ]);
    await closeAll(b, live);
  });

  it('says a logs_skipped is of MCP tool logs when the larger batch was of tool calls', async () => {
    const live = await open(b, { headers: admin });
    const writer = a.rt.mcpToolLog.writer;
    await writer.flush();
    const ids = Array.from({ length: 150 }, () => timeOrderedId());
    for (const id of ids) writer.push(toolCall(id));
    await writer.flush();
    await next(live, (m) => m['type'] === 'mcp_log' && (m['payload'] as Json | undefined)?.['id'] === ids.at(-1));
    await sleep(200);
    const calls = live.messages.filter((m) => m['type'] === 'mcp_log').map((m) => (m['payload'] as Json)['id']);
    expect(calls).toEqual(ids.slice(50));
    expect(live.messages.filter((m) => m['type'] === 'logs_skipped')).toEqual([
      { type: 'logs_skipped', count: 50, log_type: 'mcp_log' },
    ]);
    expect(live.messages.filter((m) => m['type'] === 'log')).toEqual([]);
    await closeAll(b, live);
  });

  it('sends a store_update on B for a virtual key changed on A, once B serves the change', async () => {
    const live = await open(b, { headers: admin });
    const vk = await createVk(a, { provider_configs: [pc('openai')] });
    const isKey = (m: Json) =>
      m['type'] === 'store_update' && m['kind'] === 'governance' && JSON.stringify(m).includes(vk.id);
    const created = await next(live, isKey);
    expect(created).toEqual({ type: 'store_update', kind: 'governance', virtual_key_ids: [vk.id] });
    // B's snapshot had it before the message left: the key works on B at once.
    expect((await chat(b, bearer(vk.value))).status).toBe(200);

    live.messages.length = 0;
    const res = await a.admin(`${VK}/${vk.id}`, { method: 'PUT', body: { is_active: false } });
    expect(res.status).toBe(200);
    await next(live, isKey);
    expect((await chat(b, bearer(vk.value))).status).toBe(403);
    await closeAll(b, live);
  });

  it('names the provider of a provider change', async () => {
    const live = await open(b, { headers: admin });
    const res = await a.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'groq', network_config: { base_url: fake.url, max_retries: 0 } },
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const msg = await next(live, (m) => m['type'] === 'store_update' && m['kind'] === 'provider');
    expect(msg).toEqual({ type: 'store_update', kind: 'provider', name: 'groq' });
    await closeAll(b, live);
  });
});

describe('the embedded default (PGlite + in-process coordination)', () => {
  it('delivers log events and store updates', async () => {
    const e = await startTestGateway({ backend: 'embedded', config: config() });
    try {
      const live = await open(e, { headers: admin });
      const call = await chat(e, bearer(INFERENCE_TOKEN));
      expect(call.status).toBe(200);
      const id = String(call.headers.get('x-gateway-request-id'));
      const msg = await next(live, isLog(id));
      expect(msg['payload']).toEqual(await (await e.admin(`/api/logs/${id}`)).json());
      const vk = await createVk(e, { provider_configs: [pc('openai')] });
      await next(live, (m) => m['type'] === 'store_update' && JSON.stringify(m).includes(vk.id));
      await closeAll(e, live);
    } finally {
      await e.close();
    }
  }, 60_000);
});

describe('heartbeat and bounds', () => {
  it('pings every heartbeat period and keeps a client that answers', async () => {
    const live = await open(b, { headers: admin });
    let pings = 0;
    live.ws.on('ping', () => pings++);
    await waitFor(() => pings >= 3, 5_000, 'three pings');
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    await closeAll(b, live);
  });

  it('terminates a client that does not answer a ping', async () => {
    const live = await open(b, { headers: admin, autoPong: false });
    const { code } = await live.closed;
    // Terminated without a closing handshake.
    expect(code).toBe(1006);
    await waitFor(() => b.rt.live.size === 0, 5_000, 'the hub to drop the client');
  });

  it('discards small client messages and closes with 1008 on one over 4 KiB', async () => {
    const live = await open(b, { headers: admin });
    live.ws.send('x'.repeat(1000));
    await sleep(HEARTBEAT_MS * 2);
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    live.ws.send('x'.repeat(5 * 1024));
    expect((await live.closed).code).toBe(1008);
    await waitFor(() => b.rt.live.size === 0, 5_000, 'the hub to drop the client');
  });

  it('answers 503 past the per-process client bound, before the upgrade', async () => {
    const clients = await Promise.all(Array.from({ length: MAX_CLIENTS }, () => open(b, { headers: admin })));
    expectRefusal(await refusal(wsUrl(b), admin), 503, 'service_unavailable');
    // Another pod has its own bound.
    const elsewhere = await open(a, { headers: admin });
    await closeAll(a, elsewhere);
    const first = clients.shift() as Live;
    first.ws.close();
    await first.closed;
    await waitFor(() => b.rt.live.size === MAX_CLIENTS - 1, 5_000, 'a free place');
    clients.push(await open(b, { headers: admin }));
    await closeAll(b, ...clients);
  });

  it('closes its clients with 1001 when the gateway shuts down', async () => {
    const c = await startTestGateway({
      config: config(),
      databaseUrl: a.databaseUrl,
      redisKeyPrefix: a.redisKeyPrefix,
    });
    const live = await open(c, { headers: admin });
    await c.close();
    expect((await live.closed).code).toBe(1001);
  });
});
