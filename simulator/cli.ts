#!/usr/bin/env node
/**
 * Standalone simulator:
 *   custodyflow-simulator [--port 8780] [--data ./.simulator-data] [--host 127.0.0.1]
 *                         [--cert cert.pem --key key.pem] [--in-memory] [--dedupe all|transfers]
 * `--dedupe transfers`: only POST transfer answers `existing` for a partner_txID already used
 * (spec section 3); the default `all` dedupes withdrawals, swap makes, swap takes and sweeps too
 * (`SimulatorOptions.dedupe`).
 * Prints the v1 base URL, the control URL, the v2 base URL and the paths of the API key,
 * read-only API key, v2 token and private key files (never a key or a token). Stops cleanly
 * (state flushed) on SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DATA_FILES, Simulator, type DedupeMode } from './index';

const USAGE = 'usage: custodyflow-simulator [--port 8780] [--data ./.simulator-data] [--host 127.0.0.1] [--cert cert.pem --key key.pem] [--in-memory] [--dedupe all|transfers]';

/** The command line, checked. @throws {Error} for an unknown option, a bad port, --cert without --key, or a --dedupe other than all or transfers. */
function readArgs(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string', default: '8780' },
      data: { type: 'string', default: './.simulator-data' },
      host: { type: 'string', default: '127.0.0.1' },
      cert: { type: 'string' },
      key: { type: 'string' },
      'in-memory': { type: 'boolean', default: false },
      dedupe: { type: 'string', default: 'all' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (!/^\d+$/.test(values.port!) || Number(values.port) > 65535) throw new Error('--port must be 0..65535');
  if (!!values.cert !== !!values.key) throw new Error('--cert and --key go together');
  if (values.dedupe !== 'all' && values.dedupe !== 'transfers') throw new Error('--dedupe must be all or transfers');
  return { ...values, dedupe: values.dedupe as DedupeMode };
}

async function main(): Promise<void> {
  let args: ReturnType<typeof readArgs>;
  try {
    args = readArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const tls = args.cert && args.key ? { cert: readFileSync(args.cert), key: readFileSync(args.key) } : undefined;
  const sim = await Simulator.start({ dataDir: args.data!, port: Number(args.port), host: args.host, tls, persist: !args['in-memory'], dedupe: args.dedupe });
  // Handlers first: a signal sent as soon as the banner is read must still stop cleanly.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    sim.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(`stop failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const notes = [args['in-memory'] ? 'state in memory only' : '', args.dedupe === 'transfers' ? 'partner_txID dedupes transfers only' : ''].filter(Boolean);
  console.log(`Custody Partner API simulator${notes.length ? ` (${notes.join('; ')})` : ''}`);
  console.log(`  base URL:           ${sim.baseUrl}`);
  console.log(`  control URL:        ${sim.controlUrl}`);
  console.log(`  v2 base URL:        ${sim.v2.baseUrl} (workspace ${sim.v2.workspaceId})`);
  console.log(`  API key file:       ${sim.apiKeyPath}`);
  console.log(`  read-only key file: ${sim.readOnlyApiKeyPath}`);
  console.log(`  v2 token file:      ${path.join(sim.dataDir, DATA_FILES.v2Token)}`);
  console.log(`  private key file:   ${sim.privateKeyPath} (PKCS#8)`);
  console.log(`  PKCS#1 key file:    ${sim.privateKeyPkcs1Path} (the same key, for clients that read PKCS#1 only)`);
  console.log(`  demo company:       ${sim.demo.company_id} (GET ${sim.controlUrl}/demo for all demo ids)`);
}

main().catch((err) => {
  console.error(`simulator: ${(err as Error).message}`);
  process.exit(1);
});
