/**
 * BgpListener: the listening socket (RFC 4271 §8.2.1: passive TCP establishment). Accepts connections on one
 * address/port and dispatches each by its remote address to the registered Session (`acceptConnection`), which
 * applies §6.8 collision detection. Connections from unknown addresses are closed at once (no OPEN is exchanged,
 * so nothing is revealed). TCP MD5 keys (RFC 2385) of registered peers are installed on the listening socket.
 */
import { EventEmitter } from 'node:events';
import { createServer, isIPv6 } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { PeerListener } from '../speaker-types.ts';
import { setMd5Key, socketFd } from './transport.ts';

/** What the listener needs from a session. */
export interface AcceptingSession {
  acceptConnection(socket: Socket): void;
  readonly options?: { readonly md5Password?: string };
}

/** Normalises an address for lookup: IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes a.b.c.d; IPv6 lower-cased. */
export function normalizeAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m?.[1]) return m[1];
  return isIPv6(address) ? address.toLowerCase() : address;
}

/**
 * Emits 'keyError' ({ address, message }) when a peer's TCP MD5 key could not be installed at listen() time (the
 * other peers are unaffected; `register` after listen() throws instead).
 */
export class BgpListener extends EventEmitter implements PeerListener {
  readonly address: string;
  readonly port: number;
  private readonly sessions = new Map<string, AcceptingSession>();
  private server: Server | undefined;
  /** Connections refused because no session is registered for their address. */
  rejected = 0;

  /** @param options address and port to listen on (port 0 = any free port; see `boundPort`). */
  constructor(options: { address: string; port: number }) {
    super();
    this.address = options.address;
    this.port = options.port;
  }

  /** The port actually bound (differs from `port` when 0 was given); undefined before listen(). */
  get boundPort(): number | undefined {
    const a = this.server?.address();
    return typeof a === 'object' && a ? a.port : undefined;
  }

  /** Starts listening. Rejects with the OS error (e.g. EADDRINUSE, EACCES for port 179 without privileges). */
  listen(): Promise<void> {
    if (this.server) return Promise.resolve();
    const server = createServer({ noDelay: true }, (socket) => this.onConnection(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (e) => {
        this.server = undefined;
        reject(e);
      });
      server.listen({ host: this.address, port: this.port, exclusive: true }, () => {
        server.removeAllListeners('error');
        server.on('error', () => undefined);
        for (const [addr, s] of this.sessions) {
          try {
            this.installMd5(addr, s);
          } catch (e) {
            this.emit('keyError', { address: addr, message: (e as Error).message });
          }
        }
        resolve();
      });
    });
  }

  /**
   * Routes connections from `remoteAddress` to `session` (replacing any previous one) and installs its TCP MD5 key
   * on the listening socket. Throws TransportError when the MD5 key cannot be installed.
   */
  register(remoteAddress: string, session: AcceptingSession): void {
    const addr = normalizeAddress(remoteAddress);
    this.sessions.set(addr, session);
    if (this.server?.listening) this.installMd5(addr, session);
  }

  /** Stops routing connections from `remoteAddress` (and removes its MD5 key). */
  unregister(remoteAddress: string): void {
    const addr = normalizeAddress(remoteAddress);
    const s = this.sessions.get(addr);
    this.sessions.delete(addr);
    if (s?.options?.md5Password !== undefined && this.server?.listening) {
      try {
        setMd5Key(socketFd(this.server), addr, '');
      } catch {
        // the key was never installed (e.g. no TCP MD5 support): nothing to remove
      }
    }
  }

  /**
   * Stops listening. Accepted connections belong to their sessions and are not affected, so this does not wait
   * for them (net.Server.close would).
   */
  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) server.close();
    return Promise.resolve();
  }

  private installMd5(addr: string, s: AcceptingSession): void {
    const pw = s.options?.md5Password;
    if (pw !== undefined && this.server) setMd5Key(socketFd(this.server), addr, pw);
  }

  private onConnection(socket: Socket): void {
    socket.on('error', () => undefined);
    const addr = normalizeAddress(socket.remoteAddress ?? '');
    const session = this.sessions.get(addr);
    if (!session) {
      this.rejected++;
      socket.destroy();
      return;
    }
    session.acceptConnection(socket);
  }
}
