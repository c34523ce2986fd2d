/**
 * Every capture and MRT file of shared/data/bgp goes through `herald decode` (the CLI entry, in-process) without a
 * crash: exit code 0 or 1 (never 2, never an exception), every output line is a JSON object, and the number of
 * message/record lines, error lines and note lines is as recorded below. The pcap/tcpdump/malformed/ captures must
 * give error lines. Every line is canonical JSON text: exactly what JSON.stringify prints for the parsed line (lines
 * are written as text from the codec's JSON forms, not serialised from objects).
 */
import t from 'tap';
import { relative } from 'node:path';
import { SHARED_BGP, SHARED_PRESENT, filesUnder } from './shared.ts';
import { runCli } from './run.ts';
import { skipUnless } from '../../helpers/prereq.ts';

/** file → [exit code, decoded lines, error lines, note lines]. Counts cross-checked with the data README. */
const EXPECTED: Record<string, [number, number, number, number]> = {
  'mrt/bgpdump/test_data/bview.64k_stream_overflow.gz': [0, 2, 0, 0],
  'mrt/bgpdump/test_data/bview.ipv4_unicast_add_path.gz': [0, 32, 0, 0],
  'mrt/bgpdump/test_data/bview.ipv6_unicast_add_path.gz': [0, 32, 0, 0],
  'mrt/bgpdump/test_data/updates.20020722.2238.gz': [0, 1121, 0, 0],
  'mrt/bgpdump/test_data/updates.20100722.2015.gz': [0, 2193, 0, 0],
  'mrt/bgpdump/test_data/updates.20160811.1600.gz': [0, 17406, 0, 0],
  'mrt/bgpdump/test_data/updates.long_withdrawal.gz': [0, 1, 0, 0],
  // A stray octet after the last prefix: the codec rejects the UPDATE (3/10).
  'mrt/bgpdump/test_data/updates.nlri_mask_trailing_bits.gz': [1, 0, 1, 0],
  'mrt/bgpkit/rrc00-updates.20000102.2014.gz': [0, 3957, 0, 0],
  'mrt/bgpkit/rrc15-updates.20100227.1610.gz': [0, 1953, 0, 0],
  'mrt/bgpkit/updates.bz2': [0, 85, 0, 0],
  'mrt/mrtparse/bird-mrtdump_bgp': [0, 27, 0, 0],
  'mrt/mrtparse/bird-mrtdump_rib': [0, 14, 0, 0],
  'mrt/mrtparse/bird6-mrtdump_bgp': [0, 27, 0, 0],
  'mrt/mrtparse/bird6-mrtdump_rib': [0, 9, 0, 0],
  'mrt/mrtparse/bird6_bgp': [0, 29, 0, 0],
  'mrt/mrtparse/bird_bgp': [0, 29, 0, 0],
  'mrt/mrtparse/openbgpd_bgp': [0, 87, 0, 0],
  'mrt/mrtparse/openbgpd_rib_table': [0, 31, 0, 0],
  // 31 deprecated BGP4MP_ENTRY records: each skipped with a note.
  'mrt/mrtparse/openbgpd_rib_table-mp': [0, 0, 0, 31],
  'mrt/mrtparse/openbgpd_rib_table-v2': [0, 24, 0, 0],
  'mrt/mrtparse/quagga_bgp': [0, 67, 0, 0],
  'mrt/mrtparse/quagga_rib': [0, 7, 0, 0],
  'pcap/bgp-rs/BGP_flowspec_redirect.cap': [0, 12, 0, 0],
  'pcap/bgp-rs/BGP_notification_msg.cap': [0, 3, 0, 0],
  'pcap/bgp-rs/bgp_withdraw.cap': [0, 2, 0, 0],
  'pcap/tcpdump/bgp-4byte-asn.pcap': [0, 35, 0, 0],
  // No OPEN, crafted MP_REACH_NLRI with flags 0x40: 3/4 Attribute Flags Error.
  'pcap/tcpdump/bgp-addpath.pcap': [1, 0, 1, 0],
  // NEXT_HOP 0.0.0.0 beside an MP_REACH: the codec flags RFC 7606 treat-as-withdraw.
  'pcap/tcpdump/bgp-aigp-2.pcap': [1, 1, 1, 0],
  'pcap/tcpdump/bgp-aigp.pcap': [0, 2, 0, 0],
  'pcap/tcpdump/bgp-bfd-cease.pcap': [0, 1, 0, 0],
  'pcap/tcpdump/bgp-cease-hard-reset.pcap': [0, 3, 0, 0],
  'pcap/tcpdump/bgp-enhanced-route-refresh-subtype.pcapng': [0, 8, 0, 0],
  'pcap/tcpdump/bgp-enhanced-route-refresh.pcapng': [0, 1, 0, 0],
  'pcap/tcpdump/bgp-extended-msg.pcapng': [0, 1, 0, 0],
  'pcap/tcpdump/bgp-extended-optional-parameters-length.pcapng': [0, 1, 0, 0],
  'pcap/tcpdump/bgp-extended-shutdown-msg.pcapng': [0, 1, 0, 0],
  'pcap/tcpdump/bgp-large-community.pcap': [0, 5, 0, 0],
  'pcap/tcpdump/bgp-link-bw-extcommunity.pcapng': [0, 6, 0, 0],
  'pcap/tcpdump/bgp-lu-multiple-labels.pcap': [0, 20, 0, 0],
  'pcap/tcpdump/bgp-orf.pcapng': [0, 2, 0, 0],
  'pcap/tcpdump/bgp-ovs.pcapng': [0, 4, 0, 0],
  'pcap/tcpdump/bgp-role.pcapng': [0, 12, 0, 0],
  'pcap/tcpdump/bgp-shutdown-communication.pcapng': [0, 2, 0, 0],
  'pcap/tcpdump/bgp-shutdown-msg-variations.pcap': [0, 3, 0, 0],
  'pcap/tcpdump/bgp_notification_rr_msg_error.pcap': [0, 1, 0, 0],
  'pcap/tcpdump/bgp_vpn_attrset.pcap': [0, 1, 0, 0],
  'pcap/tcpdump/malformed/bgp-bgp_capabilities_print-oobr-1.pcap': [1, 0, 2, 1],
  'pcap/tcpdump/malformed/bgp-bgp_capabilities_print-oobr-2.pcap': [1, 0, 2, 1],
  'pcap/tcpdump/malformed/bgp-infinite-loop.pcap': [1, 0, 8, 0],
  // A Cease / Hard Reset (6/9) without the inner code: the codec accepts it (data kept as hex), like tcpdump.
  'pcap/tcpdump/malformed/bgp-malformed-hard-reset.pcap': [0, 1, 0, 0],
  'pcap/tcpdump/malformed/bgp-ub.pcap': [1, 8, 29, 12],
  'pcap/tcpdump/malformed/bgp_mp_reach_nlri-oobr.pcap': [1, 0, 12, 5],
  'pcap/tcpdump/malformed/bgp_mvpn_6_and_7_oobr.pcap': [1, 0, 2, 1],
  'pcap/tcpdump/malformed/bgp_pmsi_tunnel-oobr.pcap': [1, 0, 1, 0],
  'pcap/tcpdump/malformed/bgp_vpn_rt-oobr.pcap': [1, 0, 6, 4],
  // One UPDATE with NEXT_HOP 0.0.0.0 beside an IPv6 MP_REACH (see aigp-2).
  'pcap/tcpdump/mpbgp-linklocal-nexthop.pcap': [1, 1, 1, 0],
};


t.test('every shared capture and MRT file decodes without a crash', { skip: skipUnless({ [`shared data at ${SHARED_BGP}`]: SHARED_PRESENT }, 'the shared data folder sits beside the repository (../shared/data/bgp)') }, async (t) => {
  const files = [...filesUnder(`${SHARED_BGP}pcap`), ...filesUnder(`${SHARED_BGP}mrt`)].filter((f) => !f.endsWith('.out') && !f.includes('/test_expect/'));
  t.equal(files.length, 57, '57 capture and MRT files');
  t.same(files.map((f) => relative(SHARED_BGP, f)).sort(), Object.keys(EXPECTED).sort(), 'the table lists exactly the files present');
  let decoded = 0;
  let malformedWithErrors = 0;
  for (const file of files) {
    const name = relative(SHARED_BGP, file);
    const { code, lines, out, stderr } = await runCli([file]);
    const texts = out.split('\n').filter((l) => l.length > 0);
    t.equal(texts.filter((l, i) => JSON.stringify(lines[i]) !== l).length, 0, `${name}: every line is canonical JSON text`);
    const errors = lines.filter((l) => 'error' in l);
    const notes = lines.filter((l) => 'note' in l);
    const messages = lines.length - errors.length - notes.length;
    t.same([code, messages, errors.length, notes.length], EXPECTED[name], `${name}: exit ${code}, ${messages} lines, ${errors.length} errors, ${notes.length} notes`);
    t.equal(stderr, '', `${name}: nothing on stderr`);
    for (const e of errors) t.match(e, { error: String, offset: Number }, `${name}: error line shape`);
    if (name.includes('/malformed/') && errors.length > 0) malformedWithErrors++;
    decoded += messages;
  }
  t.equal(decoded, 27270, `${decoded} messages and records decoded in all`);
  t.equal(malformedWithErrors, 8, '8 of the 9 malformed captures give error lines (the ninth decodes as a NOTIFICATION)');
});
