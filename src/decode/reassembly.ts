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

/** What a push delivers, in order. `data` chunks are views into the captured frames. */
export type StreamEvent =
  | { readonly kind: 'data'; readonly bytes: Buffer }
  | { readonly kind: 'gap'; readonly missing: number }
  /** A new SYN with another ISN: a new connection reused the 4-tuple; the consumer resets its state. */
  | { readonly kind: 'restart' };

/** Out-of-order data allowed to wait behind a hole before the hole is declared lost (octets). */
export const MAX_PENDING_OCTETS = 1 << 20;

const TWO_32 = 4294967296;

export class TcpDirection {
  /** Sequence number of stream offset 0 (uint32); undefined before the first segment. */
  private base: number | undefined;
  /** The stream offset of the next byte to deliver. */
  private next = 0;
  private pending = new Map<number, { bytes: Buffer; wireLength: number }>();
  private pendingOctets = 0;
  /** True when the first segment seen carried no SYN: the stream may start inside a message. */
  midStream = false;
  /** True once any SYN was seen for this direction. */
  synSeen = false;
  /** Payload of the SYN that started the stream (to tell its retransmission from a new connection). */
  private synPayload: Buffer | undefined;

  /** Feeds one segment; returns the events it makes deliverable (possibly none). */
  push(seg: TcpSegment): StreamEvent[] {
    const events: StreamEvent[] = [];
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
    this.accept(rel, seg.payload, Math.max(seg.payloadLength, seg.payload.length), events);
    return events;
  }

  /** Delivers everything still waiting, skipping holes (end of capture). */
  flush(): StreamEvent[] {
    const events: StreamEvent[] = [];
    while (this.pending.size > 0) this.skipHole(events);
    return events;
  }

  private reset(): void {
    this.base = undefined;
    this.next = 0;
    this.pending.clear();
    this.pendingOctets = 0;
    this.midStream = false;
    this.synSeen = false;
    this.synPayload = undefined;
  }

  private accept(rel: number, bytes: Buffer, wireLength: number, events: StreamEvent[]): void {
    const end = rel + wireLength;
    if (end <= this.next) return; // retransmission of delivered data
    if (rel > this.next) {
      const prev = this.pending.get(rel);
      if (!prev || prev.wireLength < wireLength) {
        if (prev) this.pendingOctets -= prev.bytes.length;
        this.pending.set(rel, { bytes, wireLength });
        this.pendingOctets += bytes.length;
      }
      if (this.pendingOctets > MAX_PENDING_OCTETS) this.skipHole(events);
      return;
    }
    this.deliver(rel, bytes, wireLength, events);
    this.drain(events);
  }

  /** Delivers the part of [rel, rel + wireLength) at or after `next`; `rel <= next` holds. */
  private deliver(rel: number, bytes: Buffer, wireLength: number, events: StreamEvent[]): void {
    const skip = this.next - rel;
    if (skip < bytes.length) events.push({ kind: 'data', bytes: bytes.subarray(skip) });
    const end = rel + wireLength;
    const capturedEnd = rel + bytes.length;
    if (capturedEnd < end) events.push({ kind: 'gap', missing: end - Math.max(capturedEnd, this.next) });
    this.next = end;
  }

  private drain(events: StreamEvent[]): void {
    let progressed = true;
    while (progressed && this.pending.size > 0) {
      progressed = false;
      for (const [rel, p] of this.pending) {
        if (rel <= this.next) {
          this.pending.delete(rel);
          this.pendingOctets -= p.bytes.length;
          if (rel + p.wireLength > this.next) this.deliver(rel, p.bytes, p.wireLength, events);
          progressed = true;
        }
      }
    }
  }

  private skipHole(events: StreamEvent[]): void {
    let first = Infinity;
    for (const rel of this.pending.keys()) if (rel < first) first = rel;
    if (first === Infinity) return;
    events.push({ kind: 'gap', missing: first - this.next });
    this.next = first;
    this.drain(events);
  }
}
