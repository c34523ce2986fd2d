/**
 * Loaded with `node --import` into a child under test: on exit it writes the process's peak RSS (VmHWM from
 * /proc/self/status, in KiB) to standard error as `VmHWM <kB>`, so the test reads the true peak of the whole run.
 */
import { readFileSync } from 'node:fs';

process.on('exit', () => {
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  process.stderr.write(`VmHWM ${hwm?.[1] ?? 'unknown'}\n`);
});
