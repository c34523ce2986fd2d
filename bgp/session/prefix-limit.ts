/**
 * PrefixLimit: the prefixes a peer announces on the current connection, and the maximum-prefix limit (RFC 4486 §4:
 * Cease 1 with AFI, SAFI and the limit).
 *
 * With a limit set, the set of prefixes the peer currently announces is kept (announcements add, withdrawals and
 * treat-as-withdraw remove), so re-announcing the same prefixes never counts twice. Without one, the count is the
 * cumulative number of announced NLRI (no per-prefix memory for full-table peers).
 */
import { Afi, CeaseSubcode, Safi } from '../constants.ts';
import { BgpError } from '../errors.ts';
import type { UpdateDecodeResult } from '../codec/types.ts';

export class PrefixLimit {
  /** Maximum prefixes accepted, or undefined for none. */
  readonly max: number | undefined;
  private readonly tracked: Set<string> | undefined;
  private cumulative = 0;

  constructor(max: number | undefined) {
    this.max = max;
    this.tracked = max !== undefined ? new Set() : undefined;
  }

  /** Prefixes received on the current connection (see the module comment). */
  get count(): number {
    return this.tracked ? this.tracked.size : this.cumulative;
  }

  /** Counts one received UPDATE; returns the Cease 1 to send when the count now exceeds the limit. */
  add(result: UpdateDecodeResult): BgpError | undefined {
    const msg = result.message;
    const withdraw = result.treatAsWithdraw;
    const tracked = this.tracked;
    let mpFamily: { afi: number; safi: number } | undefined;
    if (tracked) {
      for (const e of msg.withdrawnRoutes) tracked.delete(`1 ${e.prefix}`);
      for (const e of msg.nlri) {
        if (withdraw) tracked.delete(`1 ${e.prefix}`);
        else tracked.add(`1 ${e.prefix}`);
      }
    }
    let announced = withdraw ? 0 : msg.nlri.length;
    for (const a of msg.pathAttributes) {
      if (a.type === 'MP_REACH_NLRI') {
        if (!withdraw) announced += a.nlri.length;
        mpFamily = { afi: a.afi, safi: a.safi };
        if (tracked) {
          for (const e of a.nlri) {
            if (withdraw) tracked.delete(`${a.afi} ${e.prefix}`);
            else tracked.add(`${a.afi} ${e.prefix}`);
          }
        }
      } else if (a.type === 'MP_UNREACH_NLRI' && tracked) {
        for (const e of a.withdrawnRoutes) tracked.delete(`${a.afi} ${e.prefix}`);
      }
    }
    if (!tracked) this.cumulative += announced;
    if (this.max === undefined || this.count <= this.max) return undefined;
    const fam = mpFamily ?? { afi: Afi.IPv4, safi: Safi.Unicast };
    const data = Buffer.alloc(7);
    data.writeUInt16BE(fam.afi, 0);
    data.writeUInt8(fam.safi, 2);
    data.writeUInt32BE(this.max >>> 0, 3);
    return BgpError.cease(CeaseSubcode.MaximumNumberOfPrefixesReached, { data });
  }

  /** A new connection: nothing received yet. */
  clear(): void {
    this.tracked?.clear();
    this.cumulative = 0;
  }
}
