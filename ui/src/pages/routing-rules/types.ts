// The shape /api/governance/routing-rules answers (docs/api/openapi.json: RoutingRule).
export type RuleScope = 'global' | 'team' | 'customer' | 'virtual_key';

export interface RoutingRule {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  cel_expression: string;
  /** Absent provider or model: the request's own. */
  targets: { provider?: string; model?: string; weight: number }[];
  fallbacks: string[];
  scope: RuleScope;
  scope_id: string | null;
  priority: number;
  query: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}

export const ruleKeys = ['governance', 'routing-rules'] as const;
