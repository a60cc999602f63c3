import { describe, expect, it } from 'vitest';
import { spoolDirFor } from '../../src/state/spool.ts';

describe('spool directory per database', () => {
  it('differs between databases and ignores the password', () => {
    const a = spoolDirFor('/data', 'postgres://gw:secret@db:5432/one');
    expect(a).toMatch(/^\/data\/spool\/[0-9a-f]{16}$/);
    expect(spoolDirFor('/data', 'postgres://gw:rotated@db:5432/one')).toBe(a);
    expect(spoolDirFor('/data', 'postgres://gw:secret@db:5432/two')).not.toBe(a);
    expect(spoolDirFor('/data', 'postgres://gw:secret@other:5432/one')).not.toBe(a);
    expect(spoolDirFor('/data', 'host=db dbname=one')).not.toBe(spoolDirFor('/data', 'host=db dbname=two'));
  });
});
