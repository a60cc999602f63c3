// Budgets and rate limits, as every governance page shows and edits them: usage bars against each budget and each
// rate-limit window, the form fields for a list of budgets and for one rate limit, and the mapping between the
// form's strings and the API's bodies. Field errors the gateway names (`budgets[0].reset_duration`) land under the
// field they are about.
import {
  ActionIcon,
  Button,
  Group,
  NumberInput,
  Progress,
  Stack,
  Text,
  TextInput,
  Tooltip,
  VisuallyHidden,
} from '@mantine/core';
import type { GetInputPropsReturnType } from '@mantine/form';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { ApiError, api } from '../../api/client.ts';
import { notifySuccess } from '../../components/feedback.tsx';
import {
  type Budget,
  budgetKeys,
  type Customer,
  customerKeys,
  type RateLimit,
  type RateLimitEntry,
  rateLimitKeys,
  type Team,
  teamKeys,
  type VirtualKey,
  vkKeys,
} from './types.ts';

/** A form's footer: Cancel (when there is somewhere to go back to) and the submit button. */
export function FormActions(props: { submit: string; saving: boolean; onCancel?: (() => void) | undefined }) {
  return (
    <Group justify="flex-end">
      {props.onCancel && (
        <Button variant="default" onClick={props.onCancel}>
          Cancel
        </Button>
      )}
      <Button type="submit" loading={props.saving}>
        {props.submit}
      </Button>
    </Group>
  );
}

/** What the editors need of a @mantine/form form (any values shape). */
export interface FormLike {
  getInputProps(path: string, options?: { type?: 'checkbox' }): GetInputPropsReturnType;
  insertListItem(path: string, item: unknown): void;
  removeListItem(path: string, index: number): void;
  setFieldError(path: string, error: ReactNode): void;
}

/** USD with enough digits to show small spends ($0.000125) without noise on large ones. */
export function usd(n: number): string {
  if (n === 0) return '$0';
  const digits = Math.abs(n) >= 1 ? 2 : Math.min(8, 2 - Math.floor(Math.log10(Math.abs(n))) + 1);
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits })}`;
}

/** `30d` → `30 days`, as the reset durations read in a sentence. */
export function period(d: string | null | undefined): string {
  if (!d) return '';
  const m = /^(\d+)([mhdwMY])$/.exec(d);
  if (!m) return d;
  const units: Record<string, string> = { m: 'minute', h: 'hour', d: 'day', w: 'week', M: 'month', Y: 'year' };
  const n = Number(m[1]);
  const unit = units[m[2] ?? ''] ?? m[2];
  return n === 1 ? `1 ${unit}` : `${n} ${unit}s`;
}

/** A labelled bar: `used` against `limit`, red from 90 %. */
export function UsageBar(props: { label: string; used: number; limit: number; text: string }) {
  const pct = props.limit > 0 ? Math.min(100, (props.used / props.limit) * 100) : props.used > 0 ? 100 : 0;
  return (
    <Stack gap={2} miw={160}>
      <Text size="xs">{props.text}</Text>
      <Progress
        value={pct}
        color={pct >= 90 ? 'red' : pct >= 70 ? 'yellow' : 'blue'}
        size="sm"
        aria-label={props.label}
        aria-valuetext={props.text}
      />
    </Stack>
  );
}

/** One budget with its usage (when the view carries it). */
export function BudgetBar({ budget, owner }: { budget: Budget; owner: string }) {
  const used = budget.current_usage ?? 0;
  const text = `${usd(used)} of ${usd(budget.max_limit)} per ${period(budget.reset_duration)}`;
  return (
    <UsageBar
      label={`Budget of ${owner} per ${period(budget.reset_duration)}`}
      used={used}
      limit={budget.max_limit}
      text={text}
    />
  );
}

export function BudgetBars({ budgets, owner }: { budgets: Budget[]; owner: string }) {
  if (budgets.length === 0)
    return (
      <Text c="dimmed" size="sm">
        No budget
      </Text>
    );
  return (
    <Stack gap="xs">
      {budgets.map((b) => (
        <BudgetBar key={b.id} budget={b} owner={owner} />
      ))}
    </Stack>
  );
}

/** The limits and counters of a rate limit's current windows (rate-limit entries, model and provider views). */
export type RateCounters = Pick<
  RateLimitEntry,
  | 'request_max_limit'
  | 'request_reset_duration'
  | 'request_current_usage'
  | 'token_max_limit'
  | 'token_reset_duration'
  | 'token_current_usage'
>;

/** A rate limit's windows with their counters (from /governance/rate-limits), or its configured limits only. */
export function RateLimitBars({
  entry,
  limit,
  owner,
}: {
  entry?: RateCounters | undefined;
  limit?: RateLimit | null;
  owner: string;
}) {
  const rows: { kind: string; max: number; used: number | null; per: string }[] = [];
  const req = entry?.request_max_limit ?? limit?.request_max_limit;
  const tok = entry?.token_max_limit ?? limit?.token_max_limit;
  if (req != null) {
    rows.push({
      kind: 'requests',
      max: req,
      used: entry ? (entry.request_current_usage ?? 0) : null,
      per: period(entry?.request_reset_duration ?? limit?.request_reset_duration),
    });
  }
  if (tok != null) {
    rows.push({
      kind: 'tokens',
      max: tok,
      used: entry ? (entry.token_current_usage ?? 0) : null,
      per: period(entry?.token_reset_duration ?? limit?.token_reset_duration),
    });
  }
  if (rows.length === 0)
    return (
      <Text c="dimmed" size="sm">
        No rate limit
      </Text>
    );
  return (
    <Stack gap="xs">
      {rows.map((r) =>
        r.used === null ? (
          <Text key={r.kind} size="xs">
            {r.max.toLocaleString()} {r.kind} per {r.per}
          </Text>
        ) : (
          <UsageBar
            key={r.kind}
            label={`${r.kind} rate limit of ${owner}`}
            used={r.used}
            limit={r.max}
            text={`${r.used.toLocaleString()} of ${r.max.toLocaleString()} ${r.kind} per ${r.per}`}
          />
        ),
      )}
    </Stack>
  );
}

// ---- Form values ----

/** A React key for a row of a form list (rows have no id until saved). */
let rowSeq = 0;
export function rowKey(): string {
  rowSeq += 1;
  return `row-${rowSeq}`;
}

export interface BudgetDraft {
  key: string;
  /** Kept on edits: the API keeps a budget sent with its id, and so its usage. */
  id?: string;
  max_limit: number | string;
  reset_duration: string;
}

export interface RateDraft {
  request_max_limit: number | string;
  request_reset_duration: string;
  token_max_limit: number | string;
  token_reset_duration: string;
}

export function newBudget(): BudgetDraft {
  return { key: rowKey(), max_limit: '', reset_duration: '1M' };
}

export function budgetDrafts(budgets: Budget[] | undefined): BudgetDraft[] {
  return (budgets ?? []).map((b) => ({
    key: rowKey(),
    id: b.id,
    max_limit: b.max_limit,
    reset_duration: b.reset_duration,
  }));
}

export function rateDraft(r: RateLimit | null | undefined): RateDraft {
  return {
    request_max_limit: r?.request_max_limit ?? '',
    request_reset_duration: r?.request_reset_duration ?? '',
    token_max_limit: r?.token_max_limit ?? '',
    token_reset_duration: r?.token_reset_duration ?? '',
  };
}

/** A number input's value as the API takes it: empty → undefined, the typed text otherwise (the API says why not). */
export function num(v: number | string): number | undefined {
  if (typeof v === 'number') return v;
  if (v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

export function budgetBodies(drafts: BudgetDraft[]): Record<string, unknown>[] {
  return drafts.map((b) => ({
    ...(b.id ? { id: b.id } : {}),
    max_limit: num(b.max_limit) ?? null,
    reset_duration: b.reset_duration.trim(),
  }));
}

/** The rate limit's body; null when no field is filled (no limit). */
export function rateBody(r: RateDraft): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  const rm = num(r.request_max_limit);
  const tm = num(r.token_max_limit);
  if (rm !== undefined) out['request_max_limit'] = rm;
  if (r.request_reset_duration.trim()) out['request_reset_duration'] = r.request_reset_duration.trim();
  if (tm !== undefined) out['token_max_limit'] = tm;
  if (r.token_reset_duration.trim()) out['token_reset_duration'] = r.token_reset_duration.trim();
  return Object.keys(out).length > 0 ? out : null;
}

/** `provider_configs[0].budgets[1].max_limit` → `provider_configs.0.budgets.1.max_limit` (the form's path). */
export function formPath(param: string): string {
  return param.replace(/\[(\d+)\]/g, '.$1');
}

/** Puts the API's message under the field it names (the alert above the form says it too). */
export function showFieldError(form: FormLike, err: unknown): void {
  if (err instanceof ApiError && err.field) form.setFieldError(formPath(err.field), err.message);
}

/**
 * An edit form's onSubmit: saves the body with `save` and, once saved, shows the saved version (useFormVersion's
 * adopt, so this tab's own save is not taken for a change made elsewhere); a refusal goes under its field.
 */
export function saveAdopting<T extends { updated_at: string }>(
  save: {
    mutate(vars: { body: Record<string, unknown> }, opts: { onSuccess(r: T): void; onError(e: unknown): void }): void;
  },
  version: { adopt(v?: string): void },
): (body: Record<string, unknown>, form: FormLike) => void {
  return (body, form) =>
    save.mutate({ body }, { onSuccess: (r) => version.adopt(r.updated_at), onError: (e) => showFieldError(form, e) });
}

const DURATION_HELP = 'A count and a unit: m minute, h hour, d day, w week, M month, Y year (30d, 1M)';

/** The fields of a list of budgets at `path` (values: `budgets`). */
export function BudgetsFields(props: {
  form: FormLike;
  path: string;
  budgets: BudgetDraft[];
  owner: string;
  disabled?: boolean;
}) {
  const { form, path, budgets, owner, disabled } = props;
  return (
    <Stack gap="xs">
      {budgets.length === 0 && (
        <Text size="sm" c="dimmed">
          No budget: spending is not capped here.
        </Text>
      )}
      {budgets.map((b, i) => (
        <Group key={b.key} align="flex-start" wrap="nowrap">
          <NumberInput
            label={`Budget ${i + 1} of ${owner}: limit (USD)`}
            min={0}
            decimalScale={6}
            prefix="$"
            disabled={disabled}
            {...form.getInputProps(`${path}.${i}.max_limit`)}
          />
          <TextInput
            label={`Budget ${i + 1} of ${owner}: resets every`}
            description={i === 0 ? DURATION_HELP : undefined}
            disabled={disabled}
            {...form.getInputProps(`${path}.${i}.reset_duration`)}
          />
          {!disabled && (
            <Tooltip label="Remove this budget">
              <ActionIcon
                variant="subtle"
                color="red"
                mt={28}
                onClick={() => form.removeListItem(path, i)}
                aria-label={`Remove budget ${i + 1} of ${owner}`}
              >
                ×
              </ActionIcon>
            </Tooltip>
          )}
        </Group>
      ))}
      {!disabled && (
        <Group>
          <Button variant="light" size="xs" onClick={() => form.insertListItem(path, newBudget())}>
            Add budget{owner ? <VisuallyHidden> to {owner}</VisuallyHidden> : null}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

/** The four fields of a rate limit at `path`. */
export function RateLimitFields(props: { form: FormLike; path: string; owner: string; disabled?: boolean }) {
  const { form, path, owner, disabled } = props;
  return (
    <Stack gap="xs">
      <Group grow align="flex-start">
        <NumberInput
          label={`Requests allowed (${owner})`}
          description="Leave empty for no request limit"
          min={0}
          allowDecimal={false}
          disabled={disabled}
          {...form.getInputProps(`${path}.request_max_limit`)}
        />
        <TextInput
          label={`Requests window (${owner})`}
          description="1m, 1h, 1d, ..."
          disabled={disabled}
          {...form.getInputProps(`${path}.request_reset_duration`)}
        />
      </Group>
      <Group grow align="flex-start">
        <NumberInput
          label={`Tokens allowed (${owner})`}
          description="Leave empty for no token limit"
          min={0}
          allowDecimal={false}
          disabled={disabled}
          {...form.getInputProps(`${path}.token_max_limit`)}
        />
        <TextInput
          label={`Tokens window (${owner})`}
          description="1m, 1h, 1d, ..."
          disabled={disabled}
          {...form.getInputProps(`${path}.token_reset_duration`)}
        />
      </Group>
    </Stack>
  );
}

// ---- Shared lists ----

export function useTeams() {
  return useQuery({ queryKey: teamKeys, queryFn: () => api.get<{ teams: Team[] }>('/governance/teams') });
}

export function useCustomers() {
  return useQuery({
    queryKey: customerKeys,
    queryFn: () => api.get<{ customers: Customer[] }>('/governance/customers'),
  });
}

/** Every virtual key (limits only; no values), when `enabled`. */
export function useVirtualKeys(enabled = true) {
  return useQuery({
    queryKey: vkKeys,
    queryFn: () => api.get<{ virtual_keys: VirtualKey[] }>('/governance/virtual-keys'),
    enabled,
  });
}

/** Every budget with its usage (the lists' views carry limits only). */
export function useBudgets() {
  return useQuery({ queryKey: budgetKeys, queryFn: () => api.get<{ budgets: Budget[] }>('/governance/budgets') });
}

/** Every rate limit with its counters. */
export function useRateLimits() {
  return useQuery({
    queryKey: rateLimitKeys,
    queryFn: () => api.get<{ rate_limits: RateLimitEntry[] }>('/governance/rate-limits'),
  });
}

/** The rate-limit entry of an owner, if it has one. */
export function rateEntryOf(
  entries: RateLimitEntry[] | undefined,
  kind: RateLimitEntry['owner_kind'],
  id: string,
): RateLimitEntry | undefined {
  return entries?.find((e) => e.owner_kind === kind && e.owner_id === id);
}

/** Budgets of an owner with their usage, from the budgets list (falling back to the row's own, limits only). */
export function budgetsWithUsage(all: Budget[] | undefined, own: Budget[]): Budget[] {
  if (!all) return own;
  return own.map((b) => all.find((x) => x.id === b.id) ?? b);
}

/** Every governance query: a write may change budgets, rate limits and lists alike. */
export const GOVERNANCE = ['governance'] as const;

/**
 * Deletes a row from its page: leaves for `leaveTo`, then refreshes every governance query but the deleted row's
 * own (which would answer 404).
 */
export function useDeleteRow(opts: { path: string; rowKey: readonly unknown[]; leaveTo: string; success: string }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: () => api.del(opts.path),
    onSuccess: async () => {
      const isRow = (k: readonly unknown[]) => opts.rowKey.every((x, i) => k[i] === x);
      await navigate(opts.leaveTo);
      await qc.invalidateQueries({ queryKey: GOVERNANCE, predicate: (q) => !isRow(q.queryKey) });
      notifySuccess(opts.success);
    },
  });
}
