// Governance for the `gateway+governance` target, set up through the running gateway's management API:
// a global pricing override for openai/gpt-4o-mini (so every request has a cost to reserve and settle)
// and a virtual key with a budget and a request rate limit, both far above what a run uses. The governed
// target sends the same chat request as `gateway` plus `x-gateway-vk`. Afterwards the key's own quota
// view says how many requests the rate limit counted and what the budget was charged: proof that
// governance ran on every request, not only that nothing was denied.
import { request } from 'undici';

/** Prices of the override, USD per token (gpt-4o-mini's list prices). */
export const INPUT_COST_PER_TOKEN = 0.00000015;
export const OUTPUT_COST_PER_TOKEN = 0.0000006;
const READY_TIMEOUT_MS = 10_000;

export type Governed = { ok: true; vkValue: string } | { ok: false; reason: string };

export interface GovernanceEvidence {
  /** Requests counted by the key's request rate limit in its current window. */
  rateLimited: number | undefined;
  /** What the key's budget has been charged, USD. */
  budgetUsd: number | undefined;
}

type Json = Record<string, unknown>;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function call(
  origin: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await request(`${origin}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json, text };
}

/** Creates the pricing override and the virtual key, then waits until a governed request goes through. */
export async function setUpGovernance(
  origin: string,
  adminKey: string,
  model: string,
  log: (message: string) => void,
): Promise<Governed> {
  const admin = { authorization: `Bearer ${adminKey}` };
  try {
    const override = await call(origin, 'POST', '/api/governance/pricing-overrides', admin, {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_cost_per_token: INPUT_COST_PER_TOKEN,
      output_cost_per_token: OUTPUT_COST_PER_TOKEN,
    });
    if (override.status !== 201) {
      return {
        ok: false,
        reason: `creating the pricing override answered ${override.status}: ${override.text.slice(0, 300)}`,
      };
    }
    const created = await call(origin, 'POST', '/api/governance/virtual-keys', admin, {
      name: 'bench-governed',
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
      budgets: [{ max_limit: 1_000_000, reset_duration: '1d' }],
      rate_limit: { request_max_limit: 100_000_000, request_reset_duration: '1h' },
    });
    const value = isJson(created.json) ? created.json['value'] : undefined;
    // 200 since the reference's status codes were adopted (issue 14); 201 from an older tree in the A/B rig.
    if ((created.status !== 200 && created.status !== 201) || typeof value !== 'string') {
      return {
        ok: false,
        reason: `creating the virtual key answered ${created.status}: ${created.text.slice(0, 300)}`,
      };
    }
    log('virtual key and pricing override created; checking one governed plain and one streamed chat completion');
    // The key reaches the request path through the gateway's snapshot: retry until it is known.
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (const stream of [false, true]) {
      for (;;) {
        const problem = await governedSmoke(origin, value, model, stream);
        if (problem === undefined) break;
        if (Date.now() > deadline) return { ok: false, reason: problem };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return { ok: true, vkValue: value };
  } catch (error) {
    return {
      ok: false,
      reason: `setting up governance failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

async function governedSmoke(
  origin: string,
  vkValue: string,
  model: string,
  stream: boolean,
): Promise<string | undefined> {
  const what = `POST /v1/chat/completions with x-gateway-vk${stream ? ' (stream)' : ''}`;
  const { status, text } = await call(
    origin,
    'POST',
    '/v1/chat/completions',
    { 'x-gateway-vk': vkValue },
    {
      model,
      messages: [{ role: 'user', content: 'hello' }],
      ...(stream ? { stream: true } : {}),
    },
  );
  if (status !== 200) return `${what} answered ${status}: ${text.slice(0, 300)}`;
  if (stream && !text.includes('[DONE]')) return `${what} did not end with data: [DONE]: ${text.slice(-300)}`;
  return undefined;
}

/** The key's rate-limit counter and budget usage, from its self-service quota view. */
export async function readEvidence(origin: string, vkValue: string): Promise<GovernanceEvidence | string> {
  try {
    const res = await call(origin, 'GET', '/api/governance/virtual-keys/quota', { 'x-gateway-vk': vkValue });
    if (res.status !== 200 || !isJson(res.json)) return `quota answered ${res.status}: ${res.text.slice(0, 300)}`;
    const budgets = res.json['budgets'];
    const limits = res.json['rate_limits'];
    const budget = Array.isArray(budgets) ? budgets.find(isJson) : undefined;
    const limit = Array.isArray(limits)
      ? limits.find((l) => isJson(l) && l['owner_kind'] === 'virtual_key')
      : undefined;
    const used = isJson(limit) ? limit['request_current_usage'] : undefined;
    const charged = budget?.['current_usage'];
    return {
      rateLimited: typeof used === 'number' ? used : undefined,
      budgetUsd: typeof charged === 'number' ? charged : undefined,
    };
  } catch (error) {
    return `reading the quota failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
