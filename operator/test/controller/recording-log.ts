// A Log that records every entry, for tests that assert what was (and was not) logged.
import type { Log } from '../../src/controller/log.ts';

export interface Entry {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

export function recordingLog(): Log & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    entries.push({ level, fields, msg });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
