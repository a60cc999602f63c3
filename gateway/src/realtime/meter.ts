// A realtime session's governance: the session is admitted like a request (rate limits counted once, a budget
// reservation for its first response), then every `response.done` is charged as it arrives and the reservation
// of the next response taken at once. When the budgets have no room for another response (or a token rate limit
// is spent) the charge reports the denial, and the session is closed by its owner. A use the gateway will never
// see (a client secret's call runs at the provider) is refused whenever anything limits its spend.
import type { RawData } from 'ws';
import { BudgetGuard } from '../engine/budget-guard.ts';
import type { ImageTokens, UsageSummary } from '../engine/operations.ts';
import type { Candidate } from '../governance/admission.ts';
import { modelOwners, type Owners, planLimits, scopeLabel } from '../governance/limits.ts';
import { addsUp, reported } from '../governance/modality-tokens.ts';
import type { ModelLimits } from '../governance/model.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { Usage } from '../schemas/chat.ts';
import { messageOf } from '../util/errors.ts';

/** The longest a session may run; reservations of a turn outlive it (a pod that died frees them by TTL). */
export const MAX_SESSION_MS = 2 * 60 * 60 * 1000;

export class SessionMeter {
  private readonly rt: Runtime;
  private readonly sessionId: string;
  private readonly owners: Owners;
  private guard: BudgetGuard;
  private cand: Candidate | undefined;
  private turn = 0;
  /** Charges run one after another, in the order their responses finished. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Summed over the session, for its log row. */
  readonly usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  costNano: number | undefined;
  responses = 0;

  constructor(rt: Runtime, sessionId: string, owners: Owners) {
    this.rt = rt;
    this.sessionId = sessionId;
    this.owners = owners;
    this.guard = new BudgetGuard(rt, sessionId, owners, {});
    this.guard.audioOutput = true;
  }

  /** Rate-limit headers of the admission (for the upgrade's answer). */
  get headers(): Record<string, string> | undefined {
    return this.guard.headers;
  }

  /** Admission of the session on a candidate (the engine calls it before each candidate is tried). */
  async admit(cand: Candidate): Promise<void> {
    this.cand = cand;
    await this.guard.admit(cand, MAX_SESSION_MS);
  }

  /**
   * Admission of a use whose usage the gateway cannot meter (`what`, e.g. a client secret): refused with 403
   * `permission_denied` when a budget or a token rate limit applies to `cand`, else admitted like a request (its
   * request limits counted). Judged per candidate: the engine may still fall back to one without such a limit.
   */
  async admitUnmetered(cand: Candidate, what: string): Promise<void> {
    const limits = spendLimitsOf(this.owners, cand, this.rt.state.snapshot.governance.modelLimits, this.rt.now());
    if (limits.length > 0) {
      this.rt.metrics.denials.inc({ reason: 'unmetered_spend' });
      throw unmeteredDenial(what, `${cand.provider}/${cand.model}`, limits);
    }
    await this.admit(cand);
  }

  /**
   * Charges one finished response, then reserves the next. Resolves to the denial (a GatewayError or the
   * coordinator's failure) when the session may not go on, else undefined.
   */
  charge(usage: UsageSummary, keyId: string): Promise<unknown> {
    const next = this.chain.then(() => this.chargeNow(usage, keyId));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async chargeNow(usage: UsageSummary, keyId: string): Promise<unknown> {
    this.add(usage);
    const settled = this.guard.settle(usage, keyId);
    if (settled.costNano !== undefined) this.costNano = (this.costNano ?? 0) + settled.costNano;
    else if (this.guard.idle) this.addUngoverned(usage, keyId);
    // The next reservation is taken once this one is settled (else both would count against the budget).
    await settled.done.catch((err: unknown) =>
      this.rt.logger.error({ request_id: this.sessionId, err: messageOf(err) }, 'settling a realtime response failed'),
    );
    const cand = this.cand;
    if (this.guard.idle || !cand) return undefined;
    this.turn += 1;
    this.guard = new BudgetGuard(this.rt, `${this.sessionId}.${this.turn}`, this.owners, {}, false);
    // A realtime response answers in audio unless the session asked for text only: held at the audio rate.
    this.guard.audioOutput = true;
    try {
      await this.guard.admit(cand, MAX_SESSION_MS);
      return undefined;
    } catch (err) {
      return err;
    }
  }

  /** Frees the reservation of the response that never came (the session ended). */
  async close(): Promise<void> {
    await this.chain;
    await this.guard.release().catch((err: unknown) => {
      this.rt.logger.warn(
        { request_id: this.sessionId, err: messageOf(err) },
        'releasing a realtime reservation failed',
      );
    });
  }

  /** The session's first admission was refused or failed: nothing to keep. */
  abandon(): Promise<void> {
    return this.guard.release();
  }

  private add(u: Usage): void {
    this.responses += 1;
    this.usage.prompt_tokens += u.prompt_tokens;
    this.usage.completion_tokens += u.completion_tokens;
    this.usage.total_tokens += u.total_tokens;
    const cached = u.prompt_tokens_details?.cached_tokens;
    if (cached !== undefined) {
      const details = this.usage.prompt_tokens_details ?? {};
      details.cached_tokens = (details.cached_tokens ?? 0) + cached;
      this.usage.prompt_tokens_details = details;
    }
  }

  /** Outside governance the cost is only priced, for the log. */
  private addUngoverned(usage: UsageSummary, keyId: string): void {
    const cand = this.cand;
    if (!cand) return;
    const cost = BudgetGuard.costOf(this.rt, cand.provider, cand.model, usage, keyId);
    if (cost !== undefined) this.costNano = (this.costNano ?? 0) + cost;
  }
}

/**
 * What limits the spend of `cand`, as admission would apply it (its budgets and token rate limits; request limits
 * do not limit spend), named as admission errors name them. Pure.
 */
export function spendLimitsOf(owners: Owners, cand: Candidate, modelLimits: ModelLimits, nowMs: number): string[] {
  const byModel = modelOwners(modelLimits, cand.provider, cand.model);
  const plan = planLimits(owners, cand.providerConfig, nowMs, 0, false, byModel);
  return [
    ...plan.budgets.map((b) => `budget ${b.budgetId}`),
    ...plan.tokenRates.map((r) => `the token rate limit of ${scopeLabel(r.scope, r.id, modelLimits)}`),
  ];
}

/** At most this many limits are named in the refusal (a key may have many). */
const NAMED_LIMITS = 3;

/** The refusal of a mint whose use cannot be metered: why, and what to use instead. */
export function unmeteredDenial(what: string, model: string, limits: string[]): GatewayError {
  const named = limits.slice(0, NAMED_LIMITS).join(', ');
  const more = limits.length > NAMED_LIMITS ? ` and ${limits.length - NAMED_LIMITS} more` : '';
  return new GatewayError(
    'permission_denied',
    `${what} for ${model} cannot be minted while ${named}${more} ${limits.length === 1 ? 'applies' : 'apply'}: ` +
      'it is spent directly at the provider, so its usage could not be metered; open the call through ' +
      'POST /v1/realtime/calls or the session through GET /v1/realtime',
  );
}

/** The usage of a frame when it is a `response.done` event, else undefined (most frames are not even parsed). */
export function responseDoneUsage(data: RawData): UsageSummary | undefined {
  const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  // Only `response.done` carries usage; audio deltas (base64) never contain a quoted event name.
  if (!buf.includes('"response.done"')) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
  return field(event, 'type') === 'response.done' ? realtimeUsage(event) : undefined;
}

/**
 * The unified usage of a realtime `response.done` (`response.usage`: input/output tokens and their details). The
 * audio counts (`input_token_details.audio_tokens`, its `cached_tokens_details.audio_tokens`,
 * `output_token_details.audio_tokens`) are parts of the input and output totals, priced at the audio rates; the
 * image counts (`input_token_details.image_tokens`, `cached_tokens_details.image_tokens`) likewise at the image
 * rates, when the details add up (realtimeImage).
 */
export function realtimeUsage(event: unknown): UsageSummary | undefined {
  const response = field(event, 'response');
  const u = field(response, 'usage');
  if (u === undefined) return undefined;
  const input = count(field(u, 'input_tokens'));
  const output = count(field(u, 'output_tokens'));
  const total = count(field(u, 'total_tokens')) || input + output;
  const inputDetails = field(u, 'input_token_details');
  const cached = count(field(inputDetails, 'cached_tokens'));
  const usage: UsageSummary = { prompt_tokens: input, completion_tokens: output, total_tokens: total };
  if (cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  const audioIn = count(field(inputDetails, 'audio_tokens'));
  const audioCached = count(field(field(inputDetails, 'cached_tokens_details'), 'audio_tokens'));
  const audioOut = count(field(field(u, 'output_token_details'), 'audio_tokens'));
  if (audioIn > 0 || audioOut > 0) {
    usage.audio = { prompt_tokens: audioIn, cached_read_tokens: audioCached, completion_tokens: audioOut };
  }
  const image = realtimeImage(input, cached, inputDetails);
  if (image) usage.image = image;
  return usage;
}

/**
 * The image input tokens of a realtime usage, or undefined when there are none or when the input details do not add
 * up (text + audio + image = input_tokens where text is reported, and the same for the cached tokens' details):
 * such a usage is billed as before, its image tokens at the text rates. Realtime models answer no images.
 */
function realtimeImage(input: number, cached: number, details: unknown): ImageTokens | undefined {
  const imageIn = reported(field(details, 'image_tokens')) ?? 0;
  const cachedDetails = field(details, 'cached_tokens_details');
  const imageCached = reported(field(cachedDetails, 'image_tokens')) ?? 0;
  if (imageIn === 0 && imageCached === 0) return undefined;
  const fits =
    imageCached <= imageIn &&
    addsUp({ total: input, ...modalities(details), image: imageIn }) &&
    addsUp({ total: cached, ...modalities(cachedDetails), image: imageCached });
  return fits ? { prompt_tokens: imageIn, cached_read_tokens: imageCached } : undefined;
}

/** The text and audio parts of a details object, as reported. */
function modalities(details: unknown): { text: number | undefined; audio: number | undefined } {
  return { text: reported(field(details, 'text_tokens')), audio: reported(field(details, 'audio_tokens')) };
}

function field(v: unknown, name: string): unknown {
  // A non-null, non-array object: reading one property of it is safe.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[name] : undefined;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0;
}
