/**
 * TCP reassembly for one direction of one connection (RFC 9293 §3.4 sequence space, as a passive observer).
 *
 * Bytes are delivered in sequence order exactly once: retransmissions and overlapping segments are trimmed to the part
 * not yet delivered, out-of-order segments wait until the hole before them fills. A SYN fixes the start of the stream
 * (its payload, which crafted captures use, starts at ISN + 1). A direction first seen without a SYN starts at the
 * first segment's sequence number and is flagged `midStream`. A hole that never fills (a frame missing from the
 * capture, or one cut by the snap length) is skipped once too much data waits behind it, or at `flush()`; a `gap`
 * event tells the consumer that bytes are missing there.
 */
import type { TcpSegment } from './packet.ts';

/**
 * What a push delivers, in order. `data` chunks are views into the captured frames; `tag` is the caller's tag of
 * the segment the bytes came from (herald decode tags segments with their frame).
 */
export type StreamEvent<T = unknown> =
  | { readonly kind: 'data'; readonly bytes: Buffer; readonly tag: T }
  | { readonly kind: 'gap'; readonly missing: number }
  /** A new SYN with another ISN: a new connection reused the 4-tuple; the consumer resets its state. */
  | { readonly kind: 'restart' }
  /**
   * A segment resent at the same sequence number with different bytes (never in a real TCP; crafted captures do it
   * to show several messages). `bytes` is delivered as a stream of its own; the main stream goes on unchanged.
   */
  | { readonly kind: 'rewrite'; readonly bytes: Buffer; readonly tag: T };

/** Out-of-order data allowed to wait behind a hole before the hole is declared lost (octets). */
export const MAX_PENDING_OCTETS = 1 << 20;

const TWO_32 = 4294967296;

export class TcpDirection<T = unknown> {
  /** Sequence number of stream offset 0 (uint32); undefined before the first segment. */
  private base: number | undefined;
  /** The stream offset of the next byte to deliver. */
  private next = 0;
  private pending = new Map<number, { bytes: Buffer; wireLength: number; tag: T }>();
  private pendingOctets = 0;
  private readonly recent = new Map<number, Buffer>();
  /** True when the first segment seen carried no SYN: the stream may start inside a message. */
  midStream = false;
  /** True once any SYN was seen for this direction. */
  synSeen = false;
  /** Payload of the SYN that started the stream (to tell its retransmission from a new connection). */
  private synPayload: Buffer | undefined;

  /** Feeds one segment; returns the events it makes deliverable (possibly none). */
  push(seg: TcpSegment, tag: T): StreamEvent<T>[] {
    const events: StreamEvent<T>[] = [];
    if (seg.syn) {
      const isn = (seg.seq + 1) >>> 0;
      // A SYN after data was delivered starts a new connection on the same 4-tuple, unless it is a retransmission of
      // the first SYN (same ISN, same payload). Crafted captures send several SYNs with the same ISN and new payloads.
      const retransmit = this.synSeen && isn === this.base && this.synPayload !== undefined && this.synPayload.equals(seg.payload);
      if (this.base !== undefined && !retransmit && (this.next > 0 || (this.synSeen && isn !== this.base))) {
        this.reset();
        events.push({ kind: 'restart' });
      }
      if (this.base === undefined || !this.synSeen) {
        this.base = isn;
        this.midStream = false;
        this.synSeen = true;
        this.synPayload = seg.payload;
      }
    } else if (this.base === undefined) {
      this.base = seg.seq;
      this.midStream = true;
    }
    if (seg.payloadLength === 0 && seg.payload.length === 0) return events;
    const dataSeq = seg.syn ? (seg.seq + 1) >>> 0 : seg.seq;
    let rel = (dataSeq - (this.base as number) + TWO_32) % TWO_32;
    if (rel >= TWO_32 / 2) rel -= TWO_32; // before the base: an old retransmission
    this.accept(rel, seg.payload, Math.max(seg.payloadLength, seg.payload.length), tag, events);
    return events;
  }

  /** Delivers everything still waiting, skipping holes (end of capture). */
  flush(): StreamEvent<T>[] {
    const events: StreamEvent<T>[] = [];
    while (this.pending.size > 0) this.skipHole(events);
    return events;
  }

  /** Keeps the last segments by start offset, to tell a retransmission from a rewrite. */
  private remember(rel: number, bytes: Buffer): void {
    this.recent.set(rel, bytes);
    if (this.recent.size > 64) {
      const oldest = this.recent.keys().next();
      if (!oldest.done) this.recent.delete(oldest.value);
    }
  }

  private reset(): void {
    this.recent.clear();
    this.base = undefined;
    this.next = 0;
    this.pending.clear();
    this.pendingOctets = 0;
    this.midStream = false;
    this.synSeen = false;
    this.synPayload = undefined;
  }

  /**
   * The other direction acknowledged `ackSeq`: the peer received everything before it, so a hole below it is data
   * missing from the capture, not data still to come. Skips such holes now instead of waiting.
   */
  acknowledged(ackSeq: number): StreamEvent<T>[] {
    const events: StreamEvent<T>[] = [];
    if (this.base === undefined || this.pending.size === 0) return events;
    let ackRel = (ackSeq - this.base + TWO_32) % TWO_32;
    if (ackRel >= TWO_32 / 2) ackRel -= TWO_32;
    while (this.pending.size > 0 && ackRel > this.next) {
      let first = Infinity;
      for (const rel of this.pending.keys()) if (rel < first) first = rel;
      if (first > ackRel) break;
      this.skipHole(events);
    }
    return events;
  }

  private accept(rel: number, bytes: Buffer, wireLength: number, tag: T, events: StreamEvent<T>[]): void {
    const end = rel + wireLength;
    if (end <= this.next) {
      // Retransmission of delivered data: normally identical bytes, dropped.
      const earlier = this.recent.get(rel);
      if (earlier && earlier.length === bytes.length && !earlier.equals(bytes)) events.push({ kind: 'rewrite', bytes, tag });
      return;
    }
    this.remember(rel, bytes);
    if (rel > this.next) {
      const prev = this.pending.get(rel);
      if (!prev || prev.wireLength < wireLength) {
        if (prev) this.pendingOctets -= prev.bytes.length;
        this.pending.set(rel, { bytes, wireLength, tag });
        this.pendingOctets += bytes.length;
      }
      if (this.pendingOctets > MAX_PENDING_OCTETS) this.skipHole(events);
      return;
    }
    this.deliver(rel, bytes, wireLength, tag, events);
    this.drain(events);
  }

  /** Delivers the part of [rel, rel + wireLength) at or after `next`; `rel <= next` holds. */
  private deliver(rel: number, bytes: Buffer, wireLength: number, tag: T, events: StreamEvent<T>[]): void {
    const skip = this.next - rel;
    if (skip < bytes.length) events.push({ kind: 'data', bytes: bytes.subarray(skip), tag });
    const end = rel + wireLength;
    const capturedEnd = rel + bytes.length;
    if (capturedEnd < end) events.push({ kind: 'gap', missing: end - Math.max(capturedEnd, this.next) });
    this.next = end;
  }

  private drain(events: StreamEvent<T>[]): void {
    let progressed = true;
    while (progressed && this.pending.size > 0) {
      progressed = false;
      for (const [rel, p] of this.pending) {
        if (rel <= this.next) {
          this.pending.delete(rel);
          this.pendingOctets -= p.bytes.length;
          if (rel + p.wireLength > this.next) this.deliver(rel, p.bytes, p.wireLength, p.tag, events);
          progressed = true;
        }
      }
    }
  }

  private skipHole(events: StreamEvent<T>[]): void {
    let first = Infinity;
    for (const rel of this.pending.keys()) if (rel < first) first = rel;
    if (first === Infinity) return;
    events.push({ kind: 'gap', missing: first - this.next });
    this.next = first;
    this.drain(events);
  }
}
