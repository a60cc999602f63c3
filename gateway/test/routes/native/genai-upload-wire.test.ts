import { describe, expect, it } from 'vitest';
import { holderOf } from '../../../src/routes/native/genai-upload-sessions.ts';
import { checkStart, startOf, uploadCommand, uploadOffset } from '../../../src/routes/native/genai-upload-wire.ts';

const MB = 1024 * 1024;

describe('resumable upload headers', () => {
  it('takes a start only as resumable + start', () => {
    expect(() => checkStart({ 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' })).not.toThrow();
    expect(() => checkStart({ 'x-goog-upload-protocol': 'Resumable', 'x-goog-upload-command': 'START' })).not.toThrow();
    expect(() => checkStart({ 'x-goog-upload-command': 'start' })).toThrow(/x-goog-upload-protocol/);
    expect(() => checkStart({ 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'upload' })).toThrow(
      /x-goog-upload-command/,
    );
  });

  it('reads the commands of a session, finalize alone as a last empty upload', () => {
    expect(uploadCommand({ 'x-goog-upload-command': 'upload' })).toBe('upload');
    expect(uploadCommand({ 'x-goog-upload-command': 'upload, finalize' })).toBe('upload, finalize');
    expect(uploadCommand({ 'x-goog-upload-command': 'finalize,upload' })).toBe('upload, finalize');
    expect(uploadCommand({ 'x-goog-upload-command': 'finalize' })).toBe('upload, finalize');
    expect(uploadCommand({ 'x-goog-upload-command': 'cancel' })).toBe('cancel');
    expect(uploadCommand({ 'x-goog-upload-command': 'query' })).toBe('query');
    for (const bad of [undefined, '', 'start', 'upload, cancel', 'cancel, query']) {
      expect(() => uploadCommand({ 'x-goog-upload-command': bad }), String(bad)).toThrow(/x-goog-upload-command/);
    }
  });

  it('needs the offset the session is at', () => {
    expect(uploadOffset({ 'x-goog-upload-offset': '8388608' }, 8388608)).toBe(8388608);
    expect(() => uploadOffset({ 'x-goog-upload-offset': '0' }, 5)).toThrow(/received 5 bytes/);
    expect(() => uploadOffset({}, 0)).toThrow(/required/);
    expect(() => uploadOffset({ 'x-goog-upload-offset': '-1' }, 0)).toThrow(/x-goog-upload-offset/);
  });
});

describe('startOf', () => {
  it('takes the media type and name from the headers first, then the metadata', () => {
    const s = startOf(
      { 'x-goog-upload-header-content-type': 'text/plain', 'x-goog-upload-header-content-length': '12' },
      { file: { displayName: 'a.txt', mimeType: 'image/png' } },
      MB,
    );
    expect(s).toEqual({
      metadata: { file: { displayName: 'a.txt', mimeType: 'image/png' } },
      mimetype: 'text/plain',
      filename: 'a.txt',
      length: 12,
    });
    expect(startOf({}, {}, MB)).toMatchObject({ mimetype: 'application/octet-stream', filename: '' });
  });

  it('refuses bad metadata and a declared size past the bound', () => {
    expect(() => startOf({}, { file: 'x' }, MB)).toThrow(/metadata.file/);
    expect(() => startOf({}, { file: { displayName: 5 } }, MB)).toThrow(/displayName/);
    expect(() => startOf({ 'x-goog-upload-header-content-length': 'lots' }, {}, MB)).toThrow(/byte count/);
    expect(() => startOf({ 'x-goog-upload-header-content-length': String(MB + 1) }, {}, MB)).toThrow(
      /larger than 1 MB/,
    );
  });
});

describe('holderOf', () => {
  it('binds a session to the credential kind and name', () => {
    expect(holderOf({ kind: 'token', name: 't' })).toBe('token:t');
    expect(holderOf({ kind: 'basic', username: 't' })).toBe('basic:t');
    expect(holderOf(null)).toBe('anonymous');
  });
});
