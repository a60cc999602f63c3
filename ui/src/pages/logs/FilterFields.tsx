// The fields every log explorer's filter form has (time range, latency bounds, sort, page size, the buttons), for
// any form whose values are a FilterState (filters.ts): the request logs' FilterBar and the MCP tool logs' use them.
import { Button, Group, Select, TextInput } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import { type CommonFilters, fromLocalInput, PAGE_SIZES, RANGES, toLocalInput } from './filters.ts';

type Form<T extends CommonFilters> = UseFormReturnType<T>;

/** Options of a select: the known rows by name, and any id in the filter that is not (deleted since). */
export function options(
  rows: { id: string; name: string | null }[] | undefined,
  chosen: string[],
): { value: string; label: string }[] {
  const out = (rows ?? []).map((r) => ({ value: r.id, label: r.name ?? r.id }));
  for (const id of chosen) if (!out.some((o) => o.value === id)) out.push({ value: id, label: id });
  return out;
}

/** Values of a plain select: the known ones and any in the filter that is not (no longer seen). */
export function plain(values: string[] | undefined, chosen: string[]): string[] {
  return [...new Set([...(values ?? []), ...chosen])];
}

export function nonNegative(v: string): string | null {
  if (!v.trim()) return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? null : 'A number, 0 or more';
}

/** A custom range needs one end at least. */
export function customRangeError(v: string, all: CommonFilters): string | null {
  return all.range === 'custom' && !v && !all.end_time ? 'Give a start, an end, or both' : null;
}

/** The form's initial values: times as a datetime-local input holds them. */
export function formValues<T extends CommonFilters>(initial: T): T {
  return { ...initial, start_time: toLocalInput(initial.start_time), end_time: toLocalInput(initial.end_time) };
}

/** The form's values as filters: times back to RFC 3339. */
export function submitted<T extends CommonFilters>(values: T): T {
  return { ...values, start_time: fromLocalInput(values.start_time), end_time: fromLocalInput(values.end_time) };
}

export function TimeRangeFields<T extends CommonFilters>({ form }: { form: Form<T> }) {
  const v = form.values;
  return (
    <>
      <Select
        label="Time range"
        data={RANGES.map((r) => ({ value: r.value, label: r.label }))}
        // Never null: a choice cannot be taken back (allowDeselect), and data holds RangeNames only.
        allowDeselect={false}
        {...form.getInputProps('range')}
      />
      {v.range === 'custom' && (
        <>
          <TextInput type="datetime-local" label="From" {...form.getInputProps('start_time')} />
          <TextInput type="datetime-local" label="To" {...form.getInputProps('end_time')} />
        </>
      )}
    </>
  );
}

export function LatencyFields<T extends CommonFilters>({ form }: { form: Form<T> }) {
  return (
    <Group grow gap="xs" align="flex-start">
      <TextInput label="Min latency (ms)" inputMode="decimal" {...form.getInputProps('min_latency')} />
      <TextInput label="Max latency (ms)" inputMode="decimal" {...form.getInputProps('max_latency')} />
    </Group>
  );
}

export function SortFields<T extends CommonFilters>(props: {
  form: Form<T>;
  keys: { value: string; label: string }[];
}) {
  return (
    <Group grow gap="xs" align="flex-start">
      <Select label="Sort by" data={props.keys} allowDeselect={false} {...props.form.getInputProps('sort_by')} />
      <Select
        label="Order"
        data={[
          { value: 'desc', label: 'Descending' },
          { value: 'asc', label: 'Ascending' },
        ]}
        allowDeselect={false}
        {...props.form.getInputProps('order')}
      />
    </Group>
  );
}

export function PageSizeField<T extends CommonFilters>({ form }: { form: Form<T> }) {
  return <Select label="Rows per page" data={[...PAGE_SIZES]} allowDeselect={false} {...form.getInputProps('limit')} />;
}

export function FilterActions({ onClear }: { onClear: () => void }) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onClear}>
        Clear filters
      </Button>
      <Button type="submit">Apply filters</Button>
    </Group>
  );
}
