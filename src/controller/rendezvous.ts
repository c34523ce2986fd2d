/**
 * Bounded fan-out: which eligible nodes announce a VIP when at most N may (issue 18, `maxNodesPerVip`), chosen by
 * rendezvous hashing (highest random weight, Thaler & Ravishankar 1998): every node weighs every (VIP, node) pair
 * with the same hash and the N heaviest nodes win. Each node computes the choice alone from the same snapshot; adding
 * or removing a node moves only the VIPs that node wins or held.
 *
 * The weight is a 64-bit unsigned integer, stable across versions and machines (any implementation can reproduce it):
 *
 *   weight(vip, node) = fmix64( fnv1a64(vip) XOR fmix64(fnv1a64(node)) )
 *
 *   fnv1a64(s): FNV-1a 64-bit over the UTF-8 bytes of s (offset basis 0xcbf29ce484222325, prime 0x100000001b3;
 *     IETF draft-eastlake-fnv).
 *   fmix64(k): MurmurHash3's 64-bit finalizer: k ^= k >> 33; k *= 0xff51afd7ed558ccd; k ^= k >> 33;
 *     k *= 0xc4ceb9fe1a85ec53; k ^= k >> 33 (all mod 2^64). FNV alone mixes its last bytes poorly; the finalizer
 *     spreads every input bit over the whole weight.
 *
 * `vip` is the VIP's canonical address text (the controller's prefix text, e.g. "192.0.2.10" or "2001:db8::10");
 * `node` the Kubernetes Node name (metadata.name). Nodes are ranked by weight, highest first; equal weights (odds
 * about 2^-64 per pair) by node name, so the ranking is a total order and never depends on input order.
 *
 * Cost (bench/rendezvous.ts, docs/benchmarks.md): 10,000 VIPs × 200 eligible nodes with N = 8 take 80-110 ms of CPU
 * on this project's shared 2-core machines; sha256 of "vip\nnode" via node:crypto, the other candidate, took 4-6 s
 * (40-60 times more, most of it per-call overhead), so this hash was picked.
 */

/** FNV-1a 64 over the UTF-8 bytes of `s`, into out[0] (high 32 bits) and out[1] (low 32 bits). */
function fnv1a64(s: string, out: Uint32Array): void {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  const step = (byte: number): void => {
    lo = (lo ^ byte) >>> 0;
    // (hi·2^32 + lo) · (2^40 + 0x1b3) mod 2^64
    const l0 = (lo & 0xffff) * 0x1b3;
    const l1 = (lo >>> 16) * 0x1b3 + (l0 >>> 16);
    hi = (Math.imul(hi, 0x1b3) + (l1 >>> 16) + (lo << 8)) >>> 0;
    lo = (((l1 & 0xffff) << 16) | (l0 & 0xffff)) >>> 0;
  };
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      step(c);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate encodes as U+FFFD, as TextEncoder does
    if (c < 0x800) {
      step(0xc0 | (c >> 6));
    } else if (c < 0x10000) {
      step(0xe0 | (c >> 12));
      step(0x80 | ((c >> 6) & 0x3f));
    } else {
      step(0xf0 | (c >> 18));
      step(0x80 | ((c >> 12) & 0x3f));
      step(0x80 | ((c >> 6) & 0x3f));
    }
    step(0x80 | (c & 0x3f));
  }
  out[0] = hi;
  out[1] = lo;
}

/** High 32 bits of the 64-bit product of two uint32. */
function mulHi(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const m1 = a1 * b0 + ((a0 * b0) >>> 16);
  const m2 = a0 * b1 + (m1 & 0xffff);
  return (a1 * b1 + (m1 >>> 16) + (m2 >>> 16)) >>> 0;
}

/** MurmurHash3 fmix64 of (hi, lo), in place in `k` ([hi, lo]). */
function fmix64(k: Uint32Array): void {
  let hi = k[0] as number;
  let lo = ((k[1] as number) ^ (hi >>> 1)) >>> 0;
  // × 0xff51afd7ed558ccd
  let h = (mulHi(lo, 0xed558ccd) + Math.imul(hi, 0xed558ccd) + Math.imul(lo, 0xff51afd7)) >>> 0;
  lo = Math.imul(lo, 0xed558ccd) >>> 0;
  hi = h;
  lo = (lo ^ (hi >>> 1)) >>> 0;
  // × 0xc4ceb9fe1a85ec53
  h = (mulHi(lo, 0x1a85ec53) + Math.imul(hi, 0x1a85ec53) + Math.imul(lo, 0xc4ceb9fe)) >>> 0;
  lo = Math.imul(lo, 0x1a85ec53) >>> 0;
  hi = h;
  k[0] = hi;
  k[1] = (lo ^ (hi >>> 1)) >>> 0;
}

/** fmix64(fnv1a64(node)) per node name; bounded so that a churn of names cannot grow it without limit. */
const nodeKeys = new Map<string, Uint32Array>();
const MAX_CACHED_NODES = 65_536;

function nodeKey(node: string): Uint32Array {
  let k = nodeKeys.get(node);
  if (k === undefined) {
    k = new Uint32Array(2);
    fnv1a64(node, k);
    fmix64(k);
    if (nodeKeys.size >= MAX_CACHED_NODES) nodeKeys.clear();
    nodeKeys.set(node, k);
  }
  return k;
}

const scratch = new Uint32Array(2);

/**
 * The rendezvous weight of (vip, node), as an unsigned 64-bit bigint (formula in the module comment). For tests,
 * tools and other implementations; `chooseNodes` uses the same arithmetic without bigints. Never throws.
 */
export function rendezvousWeight(vip: string, node: string): bigint {
  const v = new Uint32Array(2);
  fnv1a64(vip, v);
  const n = nodeKey(node);
  scratch[0] = ((v[0] as number) ^ (n[0] as number)) >>> 0;
  scratch[1] = ((v[1] as number) ^ (n[1] as number)) >>> 0;
  fmix64(scratch);
  return (BigInt(scratch[0] as number) << 32n) | BigInt(scratch[1] as number);
}

/** The FNV-1a 64 hash of a string's UTF-8 bytes, as a bigint (exported for the published test vectors). */
export function fnv1a64Hash(s: string): bigint {
  const out = new Uint32Array(2);
  fnv1a64(s, out);
  return (BigInt(out[0] as number) << 32n) | BigInt(out[1] as number);
}

/**
 * The nodes that announce `vip`: the `n` eligible nodes with the highest rendezvous weight, highest first.
 *
 * @param vip the VIP's canonical address text (every node must pass the same text)
 * @param eligibleNodes Node names that could announce the VIP (any order; duplicates count once)
 * @param n how many may announce it: an integer >= 0, or Infinity for all
 * @returns min(n, distinct eligible) node names, ranked by weight (ties by name); the same for every input order
 * @throws RangeError when n is negative, NaN or a non-integer finite number
 */
export function chooseNodes(vip: string, eligibleNodes: readonly string[], n: number): string[] {
  if (!(n >= 0) || (Number.isFinite(n) && !Number.isInteger(n))) throw new RangeError(`chooseNodes: n must be an integer >= 0 or Infinity, got ${n}`);
  const want = Math.min(n, eligibleNodes.length);
  if (want === 0) return [];
  const v = new Uint32Array(2);
  fnv1a64(vip, v);
  const vh = v[0] as number;
  const vl = v[1] as number;
  const weigh = (node: string): void => {
    const k = nodeKey(node);
    scratch[0] = (vh ^ (k[0] as number)) >>> 0;
    scratch[1] = (vl ^ (k[1] as number)) >>> 0;
    fmix64(scratch);
  };
  if (want > SMALL_N) {
    // Many winners: weigh everything once, sort.
    const distinct = [...new Set(eligibleNodes)];
    const hi = new Uint32Array(distinct.length);
    const lo = new Uint32Array(distinct.length);
    distinct.forEach((node, i) => {
      weigh(node);
      hi[i] = scratch[0] as number;
      lo[i] = scratch[1] as number;
    });
    const order = distinct.map((_, i) => i);
    order.sort((a, b) => (hi[b] as number) - (hi[a] as number) || (lo[b] as number) - (lo[a] as number) || byName(distinct[a] as string, distinct[b] as string));
    return order.slice(0, want).map((i) => distinct[i] as string);
  }
  // Few winners (the usual maxNodesPerVip): keep the top `want` so far, heaviest first, in parallel arrays.
  const topHi: number[] = [];
  const topLo: number[] = [];
  const topName: string[] = [];
  const heavier = (hi: number, lo: number, name: string, i: number): boolean => {
    const h = topHi[i] as number;
    if (hi !== h) return hi > h;
    const l = topLo[i] as number;
    if (lo !== l) return lo > l;
    return byName(name, topName[i] as string) < 0;
  };
  for (const node of eligibleNodes) {
    const k = nodeKey(node);
    scratch[0] = (vh ^ (k[0] as number)) >>> 0;
    scratch[1] = (vl ^ (k[1] as number)) >>> 0;
    fmix64(scratch);
    const hi = scratch[0] as number;
    const lo = scratch[1] as number;
    const full = topName.length === want;
    if (full && !heavier(hi, lo, node, want - 1)) continue;
    if (topName.includes(node)) continue; // a duplicate of a node already in the top (same weight)
    let i = full ? want - 1 : topName.length;
    if (!full) {
      topHi.push(hi);
      topLo.push(lo);
      topName.push(node);
    }
    for (; i > 0 && heavier(hi, lo, node, i - 1); i--) {
      topHi[i] = topHi[i - 1] as number;
      topLo[i] = topLo[i - 1] as number;
      topName[i] = topName[i - 1] as string;
    }
    topHi[i] = hi;
    topLo[i] = lo;
    topName[i] = node;
  }
  return topName;
}

/** Above this many winners, chooseNodes sorts all weights instead of keeping a running top list. */
const SMALL_N = 16;

/** Tie-break of equal weights: node names in UTF-16 code unit order (the same on every node). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
