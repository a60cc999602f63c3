// How pages show the API's answers: errors in words (ApiError's message and field), success as a notification,
// loading as a labelled spinner, and rows written by the Kubernetes operator as read-only with the object to edit.
import { Alert, Badge, Center, Loader, Text, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { type UseMutationOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../api/client.ts';

/** An error of a query or mutation, in words. */
export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert" title={title ?? 'The gateway refused this'}>
      {describeError(error)}
    </Alert>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <Center p="lg">
      <Loader size="sm" aria-label={`Loading ${what}`} />
    </Center>
  );
}

export function notifySuccess(message: string): void {
  notifications.show({ color: 'green', message, autoClose: 4000 });
}

export function notifyError(err: unknown, title = 'The gateway refused this'): void {
  notifications.show({ color: 'red', title, message: describeError(err), autoClose: 8000 });
}

/**
 * A mutation that, on success, invalidates `invalidate` (query keys) and says `success`; errors are left to the
 * caller to show next to the form (mutation.error), where the field they name is.
 */
export function useApiMutation<TVars, TData = unknown>(
  fn: (vars: TVars) => Promise<TData>,
  opts: { invalidate?: readonly (readonly unknown[])[]; success?: string | ((data: TData) => string) } = {},
  extra: Omit<UseMutationOptions<TData, Error, TVars>, 'mutationFn'> = {},
) {
  const qc = useQueryClient();
  return useMutation<TData, Error, TVars>({
    mutationFn: fn,
    ...extra,
    onSuccess: async (data, vars, ctx, mctx) => {
      for (const key of opts.invalidate ?? []) await qc.invalidateQueries({ queryKey: key });
      if (opts.success) notifySuccess(typeof opts.success === 'function' ? opts.success(data) : opts.success);
      await extra.onSuccess?.(data, vars, ctx, mctx);
    },
  });
}

/** Rows carry `source` (`api`, `config`, `kubernetes`) and, when the operator wrote them, `owner_ref`. */
export interface Owned {
  source?: string;
  owner_ref?: string;
}

export function isOperatorOwned(row: Owned): boolean {
  return row.source === 'kubernetes' || !!row.owner_ref;
}

/** A badge saying where a row comes from; operator rows name the Kubernetes object to edit instead. */
export function SourceBadge({ row }: { row: Owned }) {
  if (isOperatorOwned(row)) {
    return (
      <Tooltip label={`Read-only here: edit ${row.owner_ref ?? 'its Kubernetes object'} with kubectl`}>
        <Badge color="grape" variant="light">
          Kubernetes
        </Badge>
      </Tooltip>
    );
  }
  return (
    <Badge color={row.source === 'config' ? 'gray' : 'blue'} variant="light">
      {row.source ?? 'api'}
    </Badge>
  );
}

/** Shown on a read-only row's details: where to change it. */
export function OperatorOwnedNotice({ row }: { row: Owned }) {
  if (!isOperatorOwned(row)) return null;
  return (
    <Alert color="grape" role="note" title="Managed by Kubernetes">
      <Text size="sm">
        This was written by the operator from <code>{row.owner_ref ?? 'a Kubernetes object'}</code>. Change it there
        (kubectl edit, or your GitOps repository); the API refuses edits here.
      </Text>
    </Alert>
  );
}
