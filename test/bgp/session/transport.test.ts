// TCP MD5 (RFC 2385), TTL and GTSM (RFC 5082) through koffi setsockopt, over loopback.
import t from 'tap';
import { closeSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { dial, setMd5Key, setTtl, socketFd, ttlOptions, TransportError } from '../../../bgp/session/transport.ts';
import { normalizeAddress } from '../../../bgp/session/listener.ts';
import { testAddresses } from './raw-peer.ts';

async function listen(address: string): Promise<{ server: Server; port: number; accepted: Socket[] }> {
  const accepted: Socket[] = [];
  const server = createServer((s) => {
    s.on('error', () => undefined);
    accepted.push(s);
  });
  await new Promise<void>((resolve) => server.listen(0, address, () => resolve()));
  const a = server.address();
  return { server, port: typeof a === 'object' && a ? a.port : 0, accepted };
}

/** 'connected' or 'no connection' within waitMs (a dropped handshake just hangs; we stop waiting). */
function outcome(s: Socket, waitMs = 1200): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.destroy();
      resolve('no connection');
    }, waitMs);
    s.once('connect', () => {
      clearTimeout(timer);
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      resolve(`error ${e.message}`);
    });
  });
}

const supported = process.platform === 'linux';

t.test('RFC 2385: matching MD5 keys connect, a wrong key does not', { skip: !supported && 'Linux only', timeout: 15_000 }, async (t) => {
  const a = testAddresses();
  const srv = await listen(a.ours);
  t.teardown(() => srv.server.close());
  setMd5Key(socketFd(srv.server), a.peer, 's3cret');
  t.equal(await outcome(dial({ remoteAddress: a.ours, remotePort: srv.port, localAddress: a.peer, md5Password: 's3cret' })), 'connected');
  t.equal(await outcome(dial({ remoteAddress: a.ours, remotePort: srv.port, localAddress: a.peer, md5Password: 'wrong' })), 'no connection', 'wrong key: SYN dropped');
  t.equal(await outcome(dial({ remoteAddress: a.ours, remotePort: srv.port, localAddress: a.peer })), 'no connection', 'no key: SYN dropped');
  t.equal(srv.accepted.length, 1, 'only the signed connection was accepted');
});

t.test('RFC 2385 over IPv6 (::1): sockaddr_in6 key', { skip: !supported && 'Linux only', timeout: 15_000 }, async (t) => {
  const srv = await listen('::1');
  t.teardown(() => srv.server.close());
  setMd5Key(socketFd(srv.server), '::1', 'v6-key');
  t.equal(await outcome(dial({ remoteAddress: '::1', remotePort: srv.port, md5Password: 'v6-key' })), 'connected');
  t.equal(await outcome(dial({ remoteAddress: '::1', remotePort: srv.port, md5Password: 'other' })), 'no connection');
  t.equal(await outcome(dial({ remoteAddress: '::1', remotePort: srv.port, ttl: 255, minTtl: 1 })), 'no connection', 'unsigned SYN dropped');
});

t.test('RFC 5082 GTSM: minimum TTL 255 accepts TTL-255 packets only', { skip: !supported && 'Linux only', timeout: 15_000 }, async (t) => {
  const a = testAddresses();
  const plain = await listen(a.ours);
  const gtsm = await listen(a.peer2);
  t.teardown(() => {
    plain.server.close();
    gtsm.server.close();
  });
  setTtl(socketFd(gtsm.server), false, 255);
  const o = ttlOptions({ ttlSecurity: true });
  t.same(o, { ttl: 255, minTtl: 255 });
  t.equal(await outcome(dial({ remoteAddress: a.peer2, remotePort: gtsm.port, localAddress: a.peer, ...o })), 'connected', 'peer sends TTL 255');
  t.equal(await outcome(dial({ remoteAddress: a.ours, remotePort: plain.port, localAddress: a.peer, ...o })), 'no connection', 'peer sends TTL 64: SYN-ACK dropped');
});

t.test('ttlOptions', async (t) => {
  t.same(ttlOptions({}), {});
  t.same(ttlOptions({ ebgpMultihop: 4 }), { ttl: 4 });
  t.same(ttlOptions({ ebgpMultihop: 3, ttlSecurity: true }), { ttl: 255, minTtl: 253 });
});

t.test('clear errors for bad options', { skip: !supported && 'Linux only' }, async (t) => {
  t.throws(() => dial({ remoteAddress: '127.0.0.1', remotePort: 1, md5Password: 'x'.repeat(81) }), TransportError);
  t.throws(() => dial({ remoteAddress: '127.0.0.1', remotePort: 1, ttl: 0 }), /TTL must be 1..255/);
  t.throws(() => socketFd(createServer()), /no file descriptor/);
  const fd = openSync('/dev/null', 'r');
  try {
    t.throws(() => setMd5Key(fd, '127.0.0.1', 'x'), /setsockopt\(TCP_MD5SIG\) failed: ENOTSOCK/, 'errno named (a file is not a socket)');
  } finally {
    closeSync(fd);
  }
});

t.test('listener address normalisation', async (t) => {
  t.equal(normalizeAddress('::ffff:127.0.0.2'), '127.0.0.2');
  t.equal(normalizeAddress('2001:DB8::1'), '2001:db8::1');
  t.equal(normalizeAddress('10.0.0.1'), '10.0.0.1');
});
