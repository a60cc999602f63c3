// Virtual-key values: generated or caller-chosen, shown once, stored only as a SHA-256 digest and a hint.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../ids.ts';

export const VIRTUAL_KEY_PREFIX = 'sk-vk-';
/** Keys issued by 1.4.x carried this prefix; still accepted (values carried over by the 1.4.x upgrade keep it). */
export const LEGACY_VIRTUAL_KEY_PREFIX = 'sk-bf-';
/** The legacy prefix of this gateway's builds before the 1.4.x prefix was known; still accepted. */
const EARLIER_PREFIX = 'sk-gw-';

/** True when the value carries a virtual-key prefix, current or legacy. */
export function hasVirtualKeyPrefix(value: string): boolean {
  return (
    value.startsWith(VIRTUAL_KEY_PREFIX) ||
    value.startsWith(LEGACY_VIRTUAL_KEY_PREFIX) ||
    value.startsWith(EARLIER_PREFIX)
  );
}
const MIN_LENGTH = 24;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

export const VALUE_RULE = `must start with ${VIRTUAL_KEY_PREFIX} (or the legacy ${LEGACY_VIRTUAL_KEY_PREFIX}), be at least ${MIN_LENGTH} characters and contain no spaces`;

/** True when a caller-chosen value is acceptable. Never echo the value in an error. */
export function isValueShaped(value: string): boolean {
  return hasVirtualKeyPrefix(value) && value.length >= MIN_LENGTH && VISIBLE_ASCII.test(value);
}

/** `sk-vk-` + 32 random bytes in base64url. */
export function generateValue(): string {
  return VIRTUAL_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** First 8 and last 4 characters, to recognise a key in lists. */
export function valueHint(value: string): string {
  return `${value.slice(0, 8)}…${value.slice(-4)}`;
}

export function valueHash(value: string): string {
  return sha256Hex(value);
}
