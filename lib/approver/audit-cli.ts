#!/usr/bin/env node
/**
 * `custodyflow-audit verify <file>`: check the hash chain of a `custody-approver` audit file
 * (audit.ts). Prints `ok: <N> lines, head <sha256>` and exits 0, or names the first bad line
 * (`line <N>: <reason>`) and exits 1. Exit 2 on a usage error or an unreadable file.
 */
import { verifyAuditFile } from './audit';

/**
 * Run the command.
 * @param argv the arguments after the program name, e.g. `['verify', 'audit.jsonl']`.
 * @param out where the report goes (default stdout), err where errors go (default stderr).
 * @returns the exit code: 0 good, 1 bad line, 2 usage or read error.
 */
export function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n'), err: (s: string) => void = (s) => process.stderr.write(s + '\n')): number {
  const [command, file] = argv;
  if (command !== 'verify' || !file || argv.length !== 2) {
    err('usage: custodyflow-audit verify <audit file>');
    return 2;
  }
  let v;
  try {
    v = verifyAuditFile(file);
  } catch (e) {
    err(`${file}: ${(e as Error).message}`);
    return 2;
  }
  if (v.ok) {
    out(`ok: ${v.lines} lines, head ${v.head}`);
    return 0;
  }
  out(`${file}: line ${v.bad!.line}: ${v.bad!.reason} (lines 1-${v.lines} are good)`);
  return 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
