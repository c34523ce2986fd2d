/**
 * A peer's whole table packed before its session is up (AdjRibOut.prepare, bgp/rib/adj-rib-out.ts): the UPDATEs of
 * the initial table toward one export context and maximum message length, kept with the Adj-RIB-Out state they
 * leave behind. When the session comes up with a context that gives the same UPDATEs (`fitsPackedTable`), they are
 * written as they are instead of being packed then, so the peer gets the table at the speed of the socket, and a
 * peer that restarts gets it again the same way while the desired set is unchanged (docs/routes.md, "Packed
 * table").
 */
import type { Family } from '../constants.ts';
import type { ExportPeer } from './export.ts';

/** The packed initial table toward `peer`; `state` is the Adj-RIB-Out's own record of what the messages announce. */
export interface PackedTable<State> {
  /** The export context the table was packed for. */
  readonly peer: ExportPeer;
  /** The maximum message length it was packed for (4096, or 65535 with RFC 8654). */
  readonly maxLength: number;
  /** Families of the desired routes when it was packed: only these families' negotiation changes the UPDATEs. */
  readonly families: ReadonlySet<Family>;
  /** Whole UPDATE messages, header included, in sending order; never written to. */
  readonly messages: readonly Buffer[];
  readonly state: State;
}

/**
 * Each field of ExportPeer but `families`, compared as the export rules read it (bgp/rib/export.ts); typed so that a
 * new ExportPeer field does not compile until it is compared here.
 */
const SAME_FIELD: { readonly [K in Exclude<keyof ExportPeer, 'families'>]-?: (a: ExportPeer, b: ExportPeer) => boolean } = {
  name: (a, b) => a.name === b.name,
  localAs: (a, b) => a.localAs === b.localAs,
  peerAs: (a, b) => a.peerAs === b.peerAs,
  fourOctetAs: (a, b) => a.fourOctetAs === b.fourOctetAs,
  localAddress: (a, b) => a.localAddress === b.localAddress,
  nextHopIPv4: (a, b) => a.nextHopIPv4 === b.nextHopIPv4,
  nextHopIPv6: (a, b) => a.nextHopIPv6 === b.nextHopIPv6,
  gracefulShutdown: (a, b) => (a.gracefulShutdown ?? false) === (b.gracefulShutdown ?? false),
};
const SAME_FIELDS = Object.values(SAME_FIELD);

/**
 * True when a session toward `peer` with `maxLength` gets exactly the UPDATEs of `table`: the same export context
 * (a family matters only when the table has routes of it) and the same maximum message length. Never throws.
 */
export function fitsPackedTable<State>(table: PackedTable<State>, peer: ExportPeer, maxLength: number): boolean {
  if (table.maxLength !== maxLength) return false;
  for (const same of SAME_FIELDS) if (!same(table.peer, peer)) return false;
  for (const f of table.families) if (table.peer.families.has(f) !== peer.families.has(f)) return false;
  return true;
}
