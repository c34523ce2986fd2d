/**
 * Community text: standard communities (RFC 1997; the well-known names of the IANA registry, RFC 8326
 * GRACEFUL_SHUTDOWN among them) and large communities (RFC 8092), from and to the text operators write. Small on
 * purpose: the daemon's main thread reads its configuration with it without loading the rest of the codec.
 */
import { WellKnownCommunity } from '../constants.ts';
import type { LargeCommunity } from './types.ts';

/** Names accepted by parseCommunity: the well-known table, plus NO_PEER for RFC 3765's NOPEER (as configs write it). */
const COMMUNITY_NAMES: Readonly<Record<string, number>> = { ...WellKnownCommunity, NO_PEER: WellKnownCommunity.NOPEER };

/** `n` when it is an integer 0..4294967295 (a community's value, a MED, an AS number); throws Error naming `what`. */
export function u32(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`${what} must be an integer in 0..4294967295, got ${n}`);
  return n;
}

/**
 * Parses a standard community (RFC 1997): "AS:value" (each 0..65535), a plain 32-bit number, or a well-known name
 * (GRACEFUL_SHUTDOWN, ACCEPT_OWN, BLACKHOLE, NO_EXPORT, NO_ADVERTISE, NO_EXPORT_SUBCONFED, NOPEER or NO_PEER;
 * case-insensitive, '-' or '_'). @returns the 32-bit value. Throws Error on anything else.
 */
export function parseCommunity(text: string): number {
  const t = text.trim();
  const m = /^(\d{1,5}):(\d{1,5})$/.exec(t);
  if (m) {
    const hi = Number(m[1]);
    const lo = Number(m[2]);
    if (hi > 0xffff || lo > 0xffff) throw new Error(`community halves must be 0..65535: ${JSON.stringify(text)}`);
    return ((hi << 16) | lo) >>> 0;
  }
  if (/^\d{1,10}$/.test(t)) return u32(Number(t), 'community');
  const name = t.toUpperCase().replace(/-/g, '_');
  const v = COMMUNITY_NAMES[name];
  if (v === undefined) throw new Error(`unknown community ${JSON.stringify(text)}`);
  return v;
}

/** "AS:value" text of a standard community (well-known ones too, e.g. NO_EXPORT → "65535:65281"). */
export function formatCommunity(n: number): string {
  return `${n >>> 16}:${n & 0xffff}`;
}

/** Parses an RFC 8092 large community "global:local1:local2" (each 0..4294967295). Throws Error otherwise. */
export function parseLargeCommunity(text: string): LargeCommunity {
  const m = /^(\d{1,10}):(\d{1,10}):(\d{1,10})$/.exec(text.trim());
  if (!m) throw new Error(`invalid large community ${JSON.stringify(text)}`);
  return [u32(Number(m[1]), 'large community'), u32(Number(m[2]), 'large community'), u32(Number(m[3]), 'large community')];
}

/** "global:local1:local2" text of a large community. */
export function formatLargeCommunity(c: LargeCommunity): string {
  return `${c[0]}:${c[1]}:${c[2]}`;
}
