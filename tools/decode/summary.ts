/**
 * `herald decode --summary`: counts per MRT record kind, per BGP message type and per path attribute, plus prefix,
 * error and note totals. Built from the decoded objects (not from the JSON lines).
 */
import type { PathAttribute } from './codec.ts';
import type { DecodeSink, ErrorLine, LineStats } from './sink.ts';

/** The summary object printed as `{"summary": ...}`. Maps are sorted by name for stable output. */
export interface Summary {
  lines: number;
  mrtRecords: Record<string, number>;
  messages: Record<string, number>;
  attributes: Record<string, number>;
  ribEntries: number;
  prefixes: { announced: number; withdrawn: number };
  errors: number;
  notes: number;
}

function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

function attributeName(a: PathAttribute): string {
  return a.type === 'UNKNOWN' ? `UNKNOWN(${a.typeCode})` : a.type;
}

function sorted(map: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A sink that counts; wraps another sink that still receives error lines (and, optionally, everything). */
export class SummarySink implements DecodeSink {
  private readonly s: Summary = { lines: 0, mrtRecords: {}, messages: {}, attributes: {}, ribEntries: 0, prefixes: { announced: 0, withdrawn: 0 }, errors: 0, notes: 0 };
  private readonly inner: DecodeSink | undefined;

  /** @param inner receives error lines (the summary never hides errors). */
  constructor(inner?: DecodeSink) {
    this.inner = inner;
  }

  line(_json: string, stats: LineStats): void {
    const s = this.s;
    s.lines++;
    if (stats.mrt) bump(s.mrtRecords, stats.mrt);
    const m = stats.message;
    if (m) {
      bump(s.messages, m.type);
      if (m.type === 'UPDATE') {
        s.prefixes.announced += m.nlri.length;
        s.prefixes.withdrawn += m.withdrawnRoutes.length;
        this.attributes(m.pathAttributes);
      }
    }
    if (stats.entries) {
      s.ribEntries += stats.entries.length;
      for (const attrs of stats.entries) this.attributes(attrs);
    }
  }

  private attributes(attrs: readonly PathAttribute[]): void {
    for (const a of attrs) {
      bump(this.s.attributes, attributeName(a));
      if (a.type === 'MP_REACH_NLRI') this.s.prefixes.announced += a.nlri.length;
      else if (a.type === 'MP_UNREACH_NLRI') this.s.prefixes.withdrawn += a.withdrawnRoutes.length;
    }
  }

  error(line: ErrorLine): void {
    this.s.errors++;
    this.inner?.error(line);
  }

  note(_line: Record<string, unknown>): void {
    this.s.notes++;
  }

  /** The counts so far, with maps sorted by key. */
  summary(): Summary {
    const s = this.s;
    return { ...s, mrtRecords: sorted(s.mrtRecords), messages: sorted(s.messages), attributes: sorted(s.attributes) };
  }
}
