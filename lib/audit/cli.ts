#!/usr/bin/env node
/**
 * `custodyflow-audit verify <folder|file> [--from <segment>] [--head <seq>:<hash>]`: check the
 * hash chains of the approver node's audit logs (audit.ts, docs/audit.md).
 *
 * - A folder: every chain in it (each `*.jsonl` live segment with its rotated segments
 *   `<stem>.<12 digits>.jsonl`, oldest first), one line per chain.
 * - A file: the chain it belongs to (a live segment, or a rotated one: its chain's live file).
 * - `--from <segment>`: start that chain at this rotated segment, its opening line's `prev`
 *   taken on trust (the segments before it archived elsewhere).
 * - `--head <seq>:<hash>`: a head logged earlier (the approver logs `audit head: seq <seq> sha256
 *   <hash>` in Node-RED's log every 1,000 lines, every hour and at close): the chain must hold
 *   line `seq` with exactly that SHA-256, else it is bad. This is what finds a tail cut off the
 *   live segment, or an edited last line, which leave a chain that is valid on its own
 *   (docs/audit.md, "The head: a cut tail or an edited last line"). One chain only: a file,
 *   or a folder holding exactly one chain.
 *
 * Prints, per chain, `ok: <N> lines, head <sha256>, <K> segment(s)` (prefixed by the chain's
 * live file name for a folder), or names the first bad line as `<segment file>: line <N>:
 * <reason>`; with `--head`, also `logged head seq <seq>: ok` or why not. Exit 0 when every
 * chain is good, 1 when one is bad (or does not hold the logged head), 2 on a usage error or an
 * unreadable file or folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SEGMENT_SEQ_DIGITS, auditChainsIn, verifyAuditChain, verifyAuditFolder, type ChainVerification, type LoggedHead } from './index';

const USAGE = 'usage: custodyflow-audit verify <audit folder | audit file> [--from <segment file>] [--head <seq>:<sha256>]';

/** `<seq>:<64 hex digits>` as a {@link LoggedHead} (the hash lowercased); undefined when it is not one. */
function parseHead(text: string | undefined): LoggedHead | undefined {
  const m = /^(\d+):([0-9a-fA-F]{64})$/.exec(text ?? '');
  if (!m) return undefined;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) && seq >= 1 ? { seq, hash: m[2].toLowerCase() } : undefined;
}

/** Remove `--<name> <value>` from `args`: absent (undefined), its value, or null when the value is missing. */
function takeOption(args: string[], name: string): string | null | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  args.splice(i, 2);
  return value === undefined || value.startsWith('--') ? null : value;
}

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
  const from = takeOption(args, '--from');
  const headArg = takeOption(args, '--head');
  const head = parseHead(headArg ?? undefined);
  const [command, target] = args;
  if (command !== 'verify' || !target || args.length !== 2 || from === null || headArg === null) {
    err(USAGE);
    return 2;
  }
  if (headArg !== undefined && !head) {
    err(`--head ${headArg}: expected <seq>:<sha256>, a line number from 1 and 64 hex digits, as the approver logs it ("audit head: seq <seq> sha256 <hash>")`);
    err(USAGE);
    return 2;
  }
  let chains: ChainVerification[];
  let folder = false;
  try {
    folder = fs.statSync(target).isDirectory();
    if (folder && head) {
      // --head names one chain's line: the folder must hold exactly one chain.
      const found = auditChainsIn(target);
      if (found.length !== 1) {
        err(`${target}: --head checks one chain, and this folder holds ${found.length}: name its file (e.g. ${found.length ? found[0] : path.join(target, '<node id>.jsonl')})`);
        err(USAGE);
        return 2;
      }
      chains = [verifyAuditChain(found[0], { from: from ?? undefined, head })];
    } else {
      chains = folder ? verifyAuditFolder(target, { from: from ?? undefined }) : [verifyAuditChain(liveFileOf(target), { from: from ?? undefined, head })];
    }
  } catch (e) {
    err(`${target}: ${(e as Error).message}`);
    return 2;
  }
  if (folder && chains.length === 0) out(`${target}: no audit files (*.jsonl)`);
  let code = 0;
  for (const c of chains) {
    const name = folder ? `${path.basename(c.live)}: ` : '';
    const trusted = c.trustedFrom ? `, from ${path.basename(c.trustedFrom)} (its opening prev taken on trust)` : '';
    if (!c.ok) code = 1;
    if (c.bad) {
      out(`${c.bad.file}: line ${c.bad.line}: ${c.bad.reason} (chain of ${path.basename(c.live)}: lines up to seq ${c.lines} are good${trusted})`);
    } else {
      out(`${name}${c.ok ? 'ok' : 'chain ok'}: ${c.lines} lines, head ${c.head}, ${c.segments.length} segment${c.segments.length === 1 ? '' : 's'}${trusted}`);
    }
    const h = c.loggedHead;
    if (h) out(h.reason ? `${path.basename(c.live)}: the logged head is not in the chain: ${h.reason}` : `${name}logged head seq ${h.seq}: ok, sha256 ${h.hash}`);
  }
  return code;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
