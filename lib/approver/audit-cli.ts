#!/usr/bin/env node
/**
 * `custodyflow-audit verify <folder|file> [--from <segment>]`: check the hash chains of
 * the approver node's audit logs (audit.ts, docs/audit.md).
 *
 * - A folder: every chain in it (each `*.jsonl` live segment with its rotated segments
 *   `<stem>.<12 digits>.jsonl`, oldest first), one line per chain.
 * - A file: the chain it belongs to (a live segment, or a rotated one: its chain's live file).
 * - `--from <segment>`: start that chain at this rotated segment, its opening line's `prev`
 *   taken on trust (the segments before it archived elsewhere).
 *
 * Prints, per chain, `ok: <N> lines, head <sha256>, <K> segment(s)` (prefixed by the chain's
 * live file name for a folder), or names the first bad line as `<segment file>: line <N>:
 * <reason>`. Exit 0 when every chain is good, 1 when one is bad, 2 on a usage error or an
 * unreadable file or folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SEGMENT_SEQ_DIGITS, verifyAuditChain, verifyAuditFolder, type ChainVerification } from './audit';

const USAGE = 'usage: custodyflow-audit verify <audit folder | audit file> [--from <segment file>]';

/** The chain's live file for `file`: itself, or, for a rotated segment `<stem>.<12 digits><ext>`, `<stem><ext>`. */
function liveFileOf(file: string): string {
  const m = new RegExp(`^(.*)\\.\\d{${SEGMENT_SEQ_DIGITS}}(\\.[^.]*)?$`).exec(path.basename(file));
  return m ? path.join(path.dirname(file), m[1] + (m[2] ?? '')) : file;
}

/**
 * Run the command.
 * @param argv the arguments after the program name, e.g. `['verify', 'custodyflow-audit/']`.
 * @param out where the report goes (default stdout), err where errors go (default stderr).
 * @returns the exit code: 0 good, 1 bad line, 2 usage or read error.
 */
export function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n'), err: (s: string) => void = (s) => process.stderr.write(s + '\n')): number {
  const args = [...argv];
  let from: string | undefined;
  const fi = args.indexOf('--from');
  if (fi >= 0) {
    from = args[fi + 1];
    args.splice(fi, 2);
  }
  const [command, target] = args;
  if (command !== 'verify' || !target || args.length !== 2 || (fi >= 0 && !from)) {
    err(USAGE);
    return 2;
  }
  let chains: ChainVerification[];
  let folder = false;
  try {
    folder = fs.statSync(target).isDirectory();
    chains = folder ? verifyAuditFolder(target, { from }) : [verifyAuditChain(liveFileOf(target), { from })];
  } catch (e) {
    err(`${target}: ${(e as Error).message}`);
    return 2;
  }
  if (folder && chains.length === 0) out(`${target}: no audit files (*.jsonl)`);
  let code = 0;
  for (const c of chains) {
    const name = folder ? `${path.basename(c.live)}: ` : '';
    const trusted = c.trustedFrom ? `, from ${path.basename(c.trustedFrom)} (its opening prev taken on trust)` : '';
    if (c.ok) {
      out(`${name}ok: ${c.lines} lines, head ${c.head}, ${c.segments.length} segment${c.segments.length === 1 ? '' : 's'}${trusted}`);
    } else {
      code = 1;
      out(`${c.bad!.file}: line ${c.bad!.line}: ${c.bad!.reason} (chain of ${path.basename(c.live)}: lines up to seq ${c.lines} are good${trusted})`);
    }
  }
  return code;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
