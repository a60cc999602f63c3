// From a request to its candidates: routing rules, `<provider>/<model>` or a virtual key's weighted provider
// configs, fallbacks, and the virtual key's allow-lists (deny by default, the rule named in the error).
import { allowCandidate, type Candidate, routeUnprefixed } from '../governance/admission.ts';
import type { Owners } from '../governance/limits.ts';
import type { RoutingTarget } from '../governance/model.ts';
import { pickTarget, routingInput } from '../governance/routing-rules.ts';
import type { Principal } from '../http/auth.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import { checkModelName, parseModelRef } from './model-ref.ts';

type Headers = Record<string, string | string[] | undefined>;

export interface RoutedRequest {
  owners: Owners;
  candidates: Candidate[];
  /** The routing rule that chose the target, if one matched. */
  ruleId: string | undefined;
}

export function ownersOf(rt: Runtime, principal: Principal | null): Owners {
  if (principal?.kind !== 'virtual_key') return { vk: undefined, team: undefined, customer: undefined };
  const g = rt.state.snapshot.governance;
  const vk = principal.vk;
  const team = vk.team_id ? g.teams.get(vk.team_id) : undefined;
  // A team's key answers to the team's customer too (the reference's hierarchy).
  const customerId = vk.customer_id ?? team?.customer_id;
  return { vk, team, customer: customerId ? g.customers.get(customerId) : undefined };
}

export function routeRequest(
  rt: Runtime,
  owners: Owners,
  body: unknown,
  model: string,
  fallbacks: readonly string[] | undefined,
  headers: Headers,
): RoutedRequest {
  let primary = model;
  let rest = fallbacks;
  let ruleId: string | undefined;
  const rules = rt.state.snapshot.governance.routingRules;
  if (rules.length > 0) {
    const who = {
      virtualKey: owners.vk && { id: owners.vk.id, name: owners.vk.name },
      team: owners.team && { id: owners.team.id, name: owners.team.name },
      customer: owners.customer && { id: owners.customer.id, name: owners.customer.name },
    };
    const sel = rt.routing.selectRule(rules, routingInput(body, headers, who), {
      virtualKeyId: owners.vk?.id,
      teamId: owners.team?.id,
      customerId: owners.customer?.id,
    });
    for (const e of sel.errors) rt.logger.warn(e, 'routing rule skipped');
    const target = sel.rule && pickTarget(sel.rule.targets, rt.random);
    if (sel.rule && target) {
      primary = targetModel(target, model);
      rest = fallbacks ?? sel.rule.fallbacks;
      ruleId = sel.rule.id;
    }
  }
  if (rest && rest.length > 10) {
    throw new GatewayError('invalid_request', 'fallbacks: at most 10 entries', { param: 'fallbacks' });
  }
  const vk = owners.vk;
  if (!vk) {
    const candidates: Candidate[] = [parseModelRef(primary)];
    rest?.forEach((f, i) => {
      candidates.push(parseModelRef(f, `fallbacks[${i}]`));
    });
    return { owners, candidates, ruleId };
  }
  let candidates: Candidate[];
  if (primary.includes('/')) {
    const r = allowCandidate(vk, parseModelRef(primary));
    if (!r.ok) throw denied(rt, r.error.rule, r.error.message);
    candidates = [r.value];
  } else {
    // Every name reaches a provider through parseModelRef but this one: the same check, before routing.
    checkModelName(primary);
    const r = routeUnprefixed(vk, primary, rt.random);
    if (!r.ok) throw denied(rt, r.error.rule, r.error.message);
    candidates = r.value;
  }
  rest?.forEach((f, i) => {
    const r = allowCandidate(vk, parseModelRef(f, `fallbacks[${i}]`));
    // A fallback the key may not use is left out; the primary decides whether the request is denied.
    if (r.ok) candidates.push(r.value);
    else rt.logger.info({ virtual_key: vk.name, rule: r.error.rule }, `fallback skipped: ${r.error.message}`);
  });
  return { owners, candidates, ruleId };
}

/** A rule's target as a model reference: what it leaves out comes from the request (`<provider>/<model>` or a bare model). */
export function targetModel(target: RoutingTarget, requested: string): string {
  const slash = requested.indexOf('/');
  const provider = target.provider ?? (slash > 0 ? requested.slice(0, slash) : undefined);
  const name = target.model ?? (slash > 0 ? requested.slice(slash + 1) : requested);
  return provider === undefined ? name : `${provider}/${name}`;
}

function denied(rt: Runtime, rule: string, message: string): GatewayError {
  rt.logger.warn({ rule }, `request denied: ${message}`);
  rt.metrics.denials.inc({ reason: rule });
  return new GatewayError('permission_denied', `${message} (rule: ${rule})`);
}
