// Priced MCP tool calls paid from budgets: before a call of a tool with a `tool_pricing` price runs for a virtual
// key, the price is reserved in the budgets of the key, its team and its customer (BudgetGuard.admitFixed, the
// coordinator's admission inference uses); a successful call is charged that price as one charge keyed by the
// call's tool-log id (idempotent, durable, exact across pods), any other outcome frees the reservation. The admin
// key, unpriced tools and free tools reserve nothing.
import { BudgetGuard } from '../engine/budget-guard.ts';
import { ownersOf } from '../engine/route-request.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import { succeeded, type ToolCallOutcome, type ToolCallStart, toolPriceNano } from './tool-log.ts';

/** A reserved price, waiting for the call's outcome. */
export interface ToolHold {
  /** The charged price in nano-USD. */
  readonly priceNano: number;
  /**
   * The call ended: a success is charged its price, anything else is released. Never throws (a failure to store
   * is logged; the reservation then expires); the promise settles when the charge or release is done.
   */
  end(outcome: ToolCallOutcome): Promise<void>;
}

export interface ToolCharger {
  /**
   * Reserves the price of a call about to run. Undefined when nothing is charged (not a virtual key, no price, a
   * price of 0). Throws GatewayError `budget_exceeded` (402) when a budget has no room for the price, or
   * `coordination_unavailable` (503) while the shared counters are unreachable; then nothing is held.
   */
  reserve(start: ToolCallStart): Promise<ToolHold | undefined>;
}

/**
 * A reservation outlives the tool-call deadline (60 s, connections/options.ts) by the guard's grace; it only
 * expires on its own when the pod holding it died.
 */
const TOOL_CALL_DEADLINE_MS = 60_000;

/** What a call charges: its price for a virtual key, nothing for anyone else. Pure. */
export function chargeablePrice(start: ToolCallStart): number | undefined {
  if (start.principal?.kind !== 'virtual_key') return undefined;
  const price = toolPriceNano(start.client, start.tool);
  return price !== undefined && price > 0 ? price : undefined;
}

export function toolCharger(rt: Runtime): ToolCharger {
  return {
    async reserve(start) {
      const price = chargeablePrice(start);
      if (price === undefined) return undefined;
      const guard = new BudgetGuard(rt, start.id, ownersOf(rt, start.principal), undefined, false);
      await guard.admitFixed(price, TOOL_CALL_DEADLINE_MS, `tool ${start.client.name}-${start.tool}`);
      return {
        priceNano: price,
        end(outcome) {
          const done = succeeded(outcome) ? guard.settleFixed().done : guard.release();
          return done.catch((err: unknown) =>
            rt.logger.error(
              { tool_call_id: start.id, err: err instanceof Error ? err.message : String(err) },
              'MCP tool charge failed',
            ),
          );
        },
      };
    },
  };
}

/** How a refused reservation is logged in the tool log (the gateway's refusal, not the tool's failure). */
export function refusalOutcome(err: unknown): Extract<ToolCallOutcome, { kind: 'failed' }> {
  if (err instanceof GatewayError) {
    const type = err.code === 'budget_exceeded' ? 'budget_exceeded' : 'service_unavailable';
    return { kind: 'failed', type, code: err.code, message: err.message };
  }
  return {
    kind: 'failed',
    type: 'internal_error',
    code: 'internal_error',
    message: err instanceof Error ? err.message : String(err),
  };
}
