// What a batch will run, checked against the virtual key before the batch is created, in one pass over its
// requests (inline, or each line of the JSONL input file, read from the provider as it arrives within a byte
// bound). A key whose provider config names its allowed models may batch only those: every request must name an
// allowed model and the batch's endpoint. And the resources the requests name (batch-references.ts) are
// collected, for the key to prove it owns them all.
import { allows, WILDCARD } from '../config/allow-list.ts';
import type { ProviderConfig } from '../governance/model.ts';
import { GatewayError } from '../http/errors.ts';
import { ProviderError } from '../providers/errors.ts';
import { jsonLines } from '../providers/openai/batches.ts';
import type { BatchCreateRequest } from '../schemas/batches.ts';
import { type BatchDialect, BatchReferences, lineReferences, requestLabel } from './batch-references.ts';

/** OpenAI's own bound on a batch input file; a larger one is refused before the provider sees the batch. */
export const MAX_BATCH_INPUT_BYTES = 200 * 1024 * 1024;

export interface BatchRule {
  /** The virtual key's name, for messages. */
  vk: string;
  provider: string;
  allowedModels: readonly string[];
  /** Every request's `url` must be this (OpenAI's batches run one endpoint). */
  endpoint: string;
  /** The batch's own `model`, which a request without one runs (Anthropic). */
  batchModel?: string | undefined;
}

type Json = Record<string, unknown>;

/** The rule a virtual key's provider config sets, or undefined when it allows every model (nothing to check). */
export function batchRule(
  vkName: string,
  pc: ProviderConfig | undefined,
  req: BatchCreateRequest,
): BatchRule | undefined {
  if (!pc || pc.allowed_models[0] === WILDCARD) return undefined;
  return {
    vk: vkName,
    provider: pc.provider,
    allowedModels: pc.allowed_models,
    endpoint: req.endpoint ?? '/v1/chat/completions',
    batchModel: req.model,
  };
}

/** Pure: why request `n` (1-based) may not run under `rule`, or undefined. */
export function lineProblem(line: Json, n: number, rule: BatchRule): GatewayError | undefined {
  const where = requestLabel(line, n);
  const url = line['url'];
  if (url !== undefined && url !== rule.endpoint) {
    return new GatewayError(
      'invalid_request',
      `${where}: url ${JSON.stringify(url)} is not the batch's endpoint ${rule.endpoint}`,
      { param: 'input_file_id' },
    );
  }
  const body = line['body'] ?? line['params'];
  const model = (body !== null && typeof body === 'object' ? (body as Json)['model'] : undefined) ?? rule.batchModel;
  if (typeof model !== 'string' || model === '') {
    return new GatewayError('invalid_request', `${where}: body.model is required`, { param: 'input_file_id' });
  }
  const bare = model.startsWith(`${rule.provider}/`) ? model.slice(rule.provider.length + 1) : model;
  if (!allows(rule.allowedModels, bare)) {
    return new GatewayError(
      'permission_denied',
      `virtual key ${rule.vk}: ${where} names model ${bare}, which is not in allowed_models of ${rule.provider} (rule: allowed_models)`,
    );
  }
  return undefined;
}

/** How the resources the requests name are collected. */
export interface ReferenceScope {
  endpoint: string;
  dialect: BatchDialect;
  /**
   * Whether the input file is read for its references alone (the provider serves an uploaded file back). When
   * it is not, a file's lines are still collected when the models rule reads them.
   */
  readsInputFile: boolean;
}

/** What one pass over a batch's requests checks: the models rule, the references, or both. */
export interface BatchChecks {
  rule?: BatchRule | undefined;
  references?: ReferenceScope | undefined;
}

/**
 * Checks every request of the batch against `checks.rule` and collects the resources they name. Inline requests
 * are read as given; an input file is read once with `readFile` (the provider's file content) line by line, and
 * the read stops at the first refused line. Answers the references collected, or undefined when none were asked
 * for or the input file was not read (the provider cannot serve it back and no rule needed it).
 */
export async function readBatchInput(
  req: BatchCreateRequest,
  checks: BatchChecks,
  readFile: (() => Promise<AsyncIterable<Uint8Array>>) | undefined,
  maxLineBytes: number,
): Promise<BatchReferences | undefined> {
  const { rule, references: scope } = checks;
  const refs = scope && new BatchReferences(req.requests ? 'requests' : 'input_file_id');
  const visit = (line: Json, n: number) => {
    const problem = rule && lineProblem(line, n, rule);
    if (problem) throw problem;
    if (refs && scope) refs.add(line, n, lineReferences(line, scope.endpoint, scope.dialect));
  };
  if (req.requests) {
    for (const [i, r] of req.requests.entries()) visit(r, i + 1);
    return refs;
  }
  if (!rule && !scope?.readsInputFile) return undefined;
  if (!readFile) {
    if (!rule) return undefined;
    throw new GatewayError(
      'permission_denied',
      `virtual key ${rule.vk}: allowed_models of ${rule.provider} is restricted and the input file cannot be read to check its models; send the requests inline (rule: allowed_models)`,
    );
  }
  let n = 0;
  try {
    for await (const line of jsonLines(bounded(await readFile()), maxLineBytes, 'the input file')) visit(line, ++n);
  } catch (err) {
    // A malformed input file is the caller's: 400, not the provider's bad answer.
    if (err instanceof ProviderError && err.kind === 'bad_response') {
      throw new GatewayError('invalid_request', `input_file_id: ${err.message} (after request ${n})`, {
        param: 'input_file_id',
      });
    }
    throw err;
  }
  if (n === 0)
    throw new GatewayError('invalid_request', 'input_file_id: the file has no requests', { param: 'input_file_id' });
  return refs;
}

/** The models rule alone (readBatchInput without references). */
export async function checkBatchInput(
  req: BatchCreateRequest,
  rule: BatchRule,
  readFile: (() => Promise<AsyncIterable<Uint8Array>>) | undefined,
  maxLineBytes: number,
): Promise<void> {
  await readBatchInput(req, { rule }, readFile, maxLineBytes);
}

async function* bounded(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_BATCH_INPUT_BYTES) {
      throw new GatewayError(
        'invalid_request',
        `input_file_id: the file is larger than ${MAX_BATCH_INPUT_BYTES / 1024 / 1024} MB, the most a batch takes`,
        { param: 'input_file_id' },
      );
    }
    yield chunk;
  }
}
