// POST /api/governance/routing-rules/validate: compiles a CEL condition exactly as a routing rule's write does
// (same library, names and sample-evaluation checks) without storing anything, so the dashboard can say what is
// wrong while the expression is typed. An invalid expression is an answer (200, `valid: false` and the reason),
// not a refused request; a body that is not `{cel_expression: string}` is a 400.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { loadCel } from '../../../governance/cel-module.ts';
import { documented } from '../../../http/openapi.ts';
import { textString } from '../../../schemas/strings.ts';
import { parseBody } from '../../../state/services/governance/crud.ts';

export const CelValidateBody = z.strictObject({
  cel_expression: textString(4096).describe('the condition to check, as a routing rule’s cel_expression'),
});

export const CelValidateView = z
  .strictObject({
    valid: z.boolean(),
    error: z.string().optional().describe('why the expression would be refused (absent when valid)'),
  })
  .meta({ id: 'CelValidation' });

export function registerRoutingRuleValidateRoute(app: FastifyInstance): void {
  app.post(
    '/governance/routing-rules/validate',
    documented('Governance')({
      operationId: 'validateRoutingRuleExpression',
      summary: 'Check a routing rule’s CEL expression without saving it',
      description:
        'Compiles `cel_expression` as a routing rule’s create or update would. An expression that would be ' +
        'refused answers 200 with `valid: false` and the reason; nothing is stored.',
      body: CelValidateBody,
      bodyExamples: [{ cel_expression: 'request.message_count > 20' }],
      responses: { 200: { description: 'Whether the expression compiles, and why not', json: CelValidateView } },
    }),
    async (req) => {
      const { cel_expression } = parseBody(CelValidateBody, req.body);
      const { compileCondition } = await loadCel();
      const compiled = compileCondition(cel_expression);
      if (compiled.ok) return { valid: true };
      // The same words the rule's write answers with (`cel_expression: ...`), without the compiler's prefix.
      return { valid: false, error: compiled.error.replace(/^condition:\s*/, '') };
    },
  );
}
