#!/usr/bin/env node
/**
 * Standalone simulator:
 *   node dist/simulator/cli.js --port 8780 --data ./.simulator-data [--host 127.0.0.1] [--cert f --key f]
 * Prints the base URL, the control URL, the API key and the path of the private key file (never
 * the key text). Stops cleanly (state flushed) on SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { Simulator } from './index';

interface CliArgs {
  port: number;
  data: string;
  host: string;
  cert?: string;
  key?: string;
}

const USAGE = 'usage: custodyflow-simulator [--port 8780] [--data ./.simulator-data] [--host 127.0.0.1] [--cert cert.pem --key key.pem]';

function parseArgs(argv: string[]): CliArgs {
  const out: CliArgs = { port: 8780, data: './.simulator-data', host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [name, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--port': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error('--port must be 0..65535');
        out.port = Number(v);
        break;
      }
      case '--data':
        out.data = value();
        break;
      case '--host':
        out.host = value();
        break;
      case '--cert':
        out.cert = value();
        break;
      case '--key':
        out.key = value();
        break;
      case '-h':
      case '--help':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  if (!!out.cert !== !!out.key) throw new Error('--cert and --key go together');
  return out;
}

async function main(): Promise<void> {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const tls = args.cert && args.key ? { cert: readFileSync(args.cert), key: readFileSync(args.key) } : undefined;
  const sim = await Simulator.start({ dataDir: args.data, port: args.port, host: args.host, tls });
  console.log(`Custody Partner API simulator`);
  console.log(`  base URL:         ${sim.baseUrl}`);
  console.log(`  control URL:      ${sim.controlUrl}`);
  console.log(`  API key:          ${sim.account.apiKey}`);
  console.log(`  private key file: ${sim.privateKeyPath}`);
  console.log(`  demo company:     ${sim.demo.company_id} (GET ${sim.controlUrl}/demo for all demo ids)`);
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
}

main().catch((err) => {
  console.error(`simulator: ${(err as Error).message}`);
  process.exit(1);
});
