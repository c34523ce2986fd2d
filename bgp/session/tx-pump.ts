/**
 * The UPDATE transmit pump: pulls one encoded UPDATE at a time from the TxSource (the Adj-RIB-Out) while the
 * session is Established and the socket's send queue holds less than TX_QUEUE_BYTES, and resumes on 'drain' or when
 * the source has news. The socket is corked meanwhile and uncorked every TX_FLUSH_BYTES, so UPDATEs leave in
 * 64 KiB writev(2) calls while the rest is packed (a full table of 100,000 IPv4 /32 is about 500 kB: one pump turn,
 * 8 system calls, instead of ~125 writes and ~30 turns at the 16 KiB default high-water mark). KEEPALIVEs and
 * NOTIFICATIONs do not wait for it: the session writes them directly.
 */
import type { Socket } from 'node:net';
import type { CodecContext } from '../codec/types.ts';

/** Octets the pump may leave queued in the socket before it waits for 'drain' (bounds memory per peer). */
export const TX_QUEUE_BYTES = 1024 * 1024;
/** The corked pump hands its UPDATEs to the kernel every this many octets (one writev each). */
export const TX_FLUSH_BYTES = 64 * 1024;

/** The transmit side's source of UPDATEs (implemented by the Adj-RIB-Out). */
export interface TxSource {
  /**
   * Next UPDATE to send as a whole encoded message (header included), or undefined when nothing is pending.
   * Called only in Established and only while the socket is writable; the returned message is written at once.
   */
  nextMessage(ctx: CodecContext, maxLength: number): Buffer | undefined;
}

export class TxPump {
  source: TxSource | undefined;
  private writable = true;
  private pumping = false;
  private readonly sent: Record<string, number>;

  /** `sent` counts the UPDATEs written (the session's `stats.messagesSent`). */
  constructor(sent: Record<string, number>) {
    this.sent = sent;
  }

  /**
   * Writes UPDATEs from the source to `socket` until the source is empty, the send queue is full, or `stillOn()`
   * turns false (the session left Established or changed connection). Re-entrant calls return at once.
   */
  run(socket: Socket, ctx: CodecContext, maxLength: number, stillOn: () => boolean): void {
    const source = this.source;
    if (this.pumping || !source) return;
    this.pumping = true;
    socket.cork();
    let corked = 0;
    try {
      while (this.writable && stillOn()) {
        const msg = source.nextMessage(ctx, maxLength);
        if (!msg) break;
        this.sent.UPDATE = (this.sent.UPDATE ?? 0) + 1;
        // write() returns false past the 16 KiB high-water mark; 'drain' still follows once the queue empties
        if (!socket.write(msg) && socket.writableLength >= TX_QUEUE_BYTES) this.writable = false;
        corked += msg.length;
        if (corked >= TX_FLUSH_BYTES) {
          socket.uncork();
          socket.cork();
          corked = 0;
        }
      }
    } finally {
      socket.uncork();
      this.pumping = false;
    }
  }

  /** The socket drained, or a new connection starts with an empty queue: the pump may write again. */
  resume(): void {
    this.writable = true;
  }
}
