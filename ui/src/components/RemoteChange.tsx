// An edit form and the row it edits changing elsewhere (another tab, a script, the operator; the page refetches
// on the live socket's store_update). A form the user has not touched follows the new version at once; one being
// edited keeps the user's typing and says the row changed, with a button to load the new version instead.
import { Alert, Button, Group, Text } from '@mantine/core';
import { useCallback, useEffect, useState } from 'react';

export interface FormVersion {
  /** The version the form shows: its React key, so a new version remounts it with the new values. */
  key: string | undefined;
  /** A newer version arrived while the form was being edited. */
  stale: boolean;
  /** The form reports whether the user has changed it (its onDirtyChange). */
  setDirty(dirty: boolean): void;
  /** Shows `version` (the one this tab just saved, or the newest), dropping what was typed. */
  adopt(version?: string): void;
}

/** Which version of a row (its `updated_at`) the edit form shows. */
export function useFormVersion(version: string | undefined): FormVersion {
  const [shown, setShown] = useState(version);
  const [dirty, setDirty] = useState(false);
  useEffect(() => {
    if (version !== undefined && (shown === undefined || !dirty)) setShown(version);
  }, [version, shown, dirty]);
  const adopt = useCallback(
    (v?: string) => {
      setDirty(false);
      setShown(v ?? version);
    },
    [version],
  );
  return { key: shown, stale: dirty && version !== undefined && version !== shown, setDirty, adopt };
}

/** Says the row changed elsewhere while the form was being edited. */
export function StaleNotice({ what, version }: { what: string; version: FormVersion }) {
  if (!version.stale) return null;
  return (
    <Alert color="yellow" role="status" title={`This ${what} was changed elsewhere`}>
      <Group justify="space-between" wrap="nowrap">
        <Text size="sm">Your changes are kept; saving them replaces the other change.</Text>
        <Button size="xs" variant="default" onClick={() => version.adopt()}>
          Load the new version
        </Button>
      </Group>
    </Alert>
  );
}

/** Tells the page (useFormVersion) whether the user has changed the form. */
export function useReportDirty(dirty: boolean, onDirtyChange: ((dirty: boolean) => void) | undefined): void {
  useEffect(() => onDirtyChange?.(dirty), [dirty, onDirtyChange]);
}
