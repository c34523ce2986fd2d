/**
 * Connection: one TCP connection of a session (the FSM's own, or a collision candidate held aside): the socket, its
 * message framer, the peer's OPEN once received, and the one place a BgpError becomes a NOTIFICATION on the wire
 * (RFC 4271 §6: the NOTIFICATION is sent, then the connection is closed once it has been flushed).
 */
import type { Socket } from 'node:net';
import { encodeMessage } from '../codec/message.ts';
import { notificationFromError } from '../codec/notification.ts';
import { DEFAULT_CONTEXT } from '../codec/types.ts';
import type { NotificationMessage, OpenMessage } from '../codec/types.ts';
import type { BgpError } from '../errors.ts';
import { MessageFramer } from '../wire/framer.ts';

/** How long to wait for the peer to close after our NOTIFICATION was flushed before destroying the socket (ms). */
export const NOTIFICATION_CLOSE_TIMEOUT_MS = 1000;

/** What a connection reports to its session (each callback gets the connection it is about). */
export interface ConnectionEvents {
  /** Our outgoing connection is up (RFC 4271 §8 Event 16). */
  connected(conn: Connection): void;
  data(conn: Connection, chunk: Buffer): void;
  /** The socket's send queue drained ('drain'). */
  drain(conn: Connection): void;
  /** A socket error (`byPeer` false) or the socket closed (`byPeer` true); also after our own close(). */
  failed(conn: Connection, message: string, byPeer: boolean): void;
  /** The socket is closed for good. Called once, after the last `failed`. */
  closed(conn: Connection): void;
}

export class Connection {
  readonly socket: Socket;
  /** Who opened it: `outgoing` = we dialled, `incoming` = accepted from the listener. */
  readonly direction: 'outgoing' | 'incoming';
  readonly framer = new MessageFramer();
  /** TCP is up: at once for an accepted connection, on 'connect' for ours. */
  connected: boolean;
  /** A NOTIFICATION was written or close() was called: input is ignored and nothing but a NOTIFICATION is written. */
  closing = false;
  /** Our OPEN on this connection, once sent. */
  localOpen: OpenMessage | undefined;
  /** The peer's OPEN on this connection, once received and checked. */
  remoteOpen: OpenMessage | undefined;
  private readonly sent: Record<string, number>;

  /**
   * Takes over `socket` (an accepted one, or one still connecting for `outgoing`) and reports its events.
   * `sent` counts the messages written, by type name (the session's `stats.messagesSent`).
   */
  constructor(socket: Socket, direction: 'outgoing' | 'incoming', events: ConnectionEvents, sent: Record<string, number>) {
    this.socket = socket;
    this.direction = direction;
    this.connected = direction === 'incoming';
    this.sent = sent;
    socket.setNoDelay(true);
    if (!this.connected) {
      socket.once('connect', () => {
        this.connected = true;
        events.connected(this);
      });
    }
    socket.on('data', (chunk: Buffer) => events.data(this, chunk));
    socket.on('drain', () => events.drain(this));
    socket.on('error', (err: Error) => events.failed(this, err.message, false));
    socket.on('end', () => {
      // Half-close from the peer: finish our side too.
      if (!this.closing) socket.end();
    });
    socket.on('close', () => {
      events.failed(this, 'connection closed by peer', true);
      events.closed(this);
    });
  }

  /** Writes one whole message of type `type` (counted); refused (false) once closing, except for a NOTIFICATION. */
  write(bytes: Buffer, type: string): boolean {
    if (this.socket.destroyed || (this.closing && type !== 'NOTIFICATION')) return false;
    this.sent[type] = (this.sent[type] ?? 0) + 1;
    return this.socket.write(bytes);
  }

  /**
   * The one BgpError → NOTIFICATION path: writes the NOTIFICATION and marks the connection closing; `close(true)`
   * then ends it once flushed. Returns the message written (for the session's record).
   */
  notify(error: BgpError): NotificationMessage {
    const msg = notificationFromError(error);
    this.write(encodeMessage(msg, DEFAULT_CONTEXT), 'NOTIFICATION');
    this.closing = true;
    return msg;
  }

  /**
   * Closes the connection. `afterFlush` (a NOTIFICATION was written): `end()`, so the FIN follows the queued bytes,
   * and destroy after NOTIFICATION_CLOSE_TIMEOUT_MS of real time if the peer does not close; otherwise destroy now.
   */
  close(afterFlush: boolean): void {
    this.closing = true;
    const socket = this.socket;
    if (socket.destroyed) return;
    if (!afterFlush) {
      socket.destroy();
      return;
    }
    socket.end();
    const t = setTimeout(() => socket.destroy(), NOTIFICATION_CLOSE_TIMEOUT_MS);
    t.unref();
    socket.once('close', () => clearTimeout(t));
  }
}
