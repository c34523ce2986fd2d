/**
 * A small, independent UPDATE decoder for the RIB tests (not the codec under test, not the packer): reads a whole
 * message and returns withdrawn/announced prefixes per family and the raw attributes by type code.
 */
export interface DecodedUpdate {
  length: number;
  withdrawn: string[]; // "ipv4-unicast 10.0.0.0/24"
  announced: string[];
  attrs: Map<number, { flags: number; value: Buffer }>;
  /** Attribute bytes excluding MP_REACH_NLRI's NLRI (for "same attributes" comparisons). */
  attrSignature: string;
  mpNextHop?: string;
  endOfRib?: string;
}

function v4(b: Buffer): string {
  const x = Buffer.concat([b, Buffer.alloc(4)]);
  return `${x[0]}.${x[1]}.${x[2]}.${x[3]}`;
}

function v6(b: Buffer): string {
  const x = Buffer.concat([b, Buffer.alloc(16)]).subarray(0, 16);
  const groups: string[] = [];
  for (let i = 0; i < 8; i++) groups.push(x.readUInt16BE(i * 2).toString(16));
  // RFC 5952 compression of the longest run of zeros (>= 2 groups)
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

function prefixes(b: Buffer, family: 'ipv4-unicast' | 'ipv6-unicast'): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < b.length) {
    const len = b[i]!;
    const n = (len + 7) >> 3;
    const bytes = b.subarray(i + 1, i + 1 + n);
    if (bytes.length !== n) throw new Error('truncated NLRI');
    out.push(`${family} ${family === 'ipv4-unicast' ? v4(bytes) : v6(bytes)}/${len}`);
    i += 1 + n;
  }
  return out;
}

/** Decodes one whole UPDATE message (header included). Throws on malformed framing. */
export function decodeUpdate(msg: Buffer): DecodedUpdate {
  if (!msg.subarray(0, 16).equals(Buffer.alloc(16, 0xff))) throw new Error('bad marker');
  const length = msg.readUInt16BE(16);
  if (length !== msg.length) throw new Error(`length field ${length} != ${msg.length}`);
  if (msg[18] !== 2) throw new Error('not an UPDATE');
  const wl = msg.readUInt16BE(19);
  const withdrawn = prefixes(msg.subarray(21, 21 + wl), 'ipv4-unicast');
  const al = msg.readUInt16BE(21 + wl);
  const attrStart = 23 + wl;
  const attrEnd = attrStart + al;
  if (attrEnd > msg.length) throw new Error('attributes overrun');
  const announced = prefixes(msg.subarray(attrEnd), 'ipv4-unicast');
  const attrs = new Map<number, { flags: number; value: Buffer }>();
  const sig: string[] = [];
  let mpNextHop: string | undefined;
  let i = attrStart;
  while (i < attrEnd) {
    const flags = msg[i]!;
    const code = msg[i + 1]!;
    const ext = (flags & 0x10) !== 0;
    const len = ext ? msg.readUInt16BE(i + 2) : msg[i + 2]!;
    const vs = i + (ext ? 4 : 3);
    const value = msg.subarray(vs, vs + len);
    if (value.length !== len) throw new Error('attribute overrun');
    if (attrs.has(code)) throw new Error(`duplicate attribute ${code}`);
    attrs.set(code, { flags, value });
    if (code === 14) {
      const afi = value.readUInt16BE(0);
      const nhl = value[3]!;
      const nh = value.subarray(4, 4 + nhl);
      mpNextHop = afi === 2 ? v6(nh) : v4(nh);
      sig.push(`14:${afi}:${nh.toString('hex')}`);
      announced.push(...prefixes(value.subarray(5 + nhl), afi === 2 ? 'ipv6-unicast' : 'ipv4-unicast'));
    } else if (code === 15) {
      const afi = value.readUInt16BE(0);
      withdrawn.push(...prefixes(value.subarray(3), afi === 2 ? 'ipv6-unicast' : 'ipv4-unicast'));
    } else {
      sig.push(`${flags}:${code}:${value.toString('hex')}`);
    }
    i = vs + len;
  }
  const res: DecodedUpdate = { length, withdrawn, announced, attrs, attrSignature: sig.join('|'), mpNextHop };
  if (withdrawn.length === 0 && announced.length === 0) {
    if (al === 0) res.endOfRib = 'ipv4-unicast';
    else if (attrs.size === 1 && attrs.has(15)) res.endOfRib = attrs.get(15)!.value.readUInt16BE(0) === 2 ? 'ipv6-unicast' : 'ipv4-unicast';
  }
  return res;
}
