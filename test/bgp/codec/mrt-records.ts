/**
 * Test helper: walks the records of an MRT file (RFC 6396 §2): Timestamp(4) Type(2) Subtype(2) Length(4) then the
 * record body. Shared by the MRT-driven codec tests (TABLE_DUMP_V2 RIB entries, BGP4MP messages).
 */

/** One MRT record: its header fields and where its body lies in the file buffer (`[start, end)`, octets). */
export interface MrtRecord {
  readonly ts: number;
  readonly type: number;
  readonly subtype: number;
  readonly start: number;
  readonly end: number;
}

/** Yields every whole record of `mrt` in order; a truncated last record header ends the walk. Never throws. */
export function* mrtRecords(mrt: Buffer): Generator<MrtRecord> {
  let p = 0;
  while (p + 12 <= mrt.length) {
    const start = p + 12;
    const end = start + mrt.readUInt32BE(p + 8);
    yield { ts: mrt.readUInt32BE(p), type: mrt.readUInt16BE(p + 4), subtype: mrt.readUInt16BE(p + 6), start, end };
    p = end;
  }
}
