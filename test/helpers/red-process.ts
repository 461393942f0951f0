/**
 * A real `node-red` process for the end-to-end tests: the pack linked into a temporary user
 * directory (as `npm start` installs it), started with scripts/node-red-settings.js on a free
 * loopback port, waited for, watched on `/comms`, and stopped.
 */
import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { Browser, Page } from 'playwright-core';

/** The project root (the compiled tests run from dist/test). */
export const root = path.resolve(__dirname, '..', '..', '..');

/** Resolve after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A TCP port that was free on 127.0.0.1 a moment ago (a server listened on port 0 and closed).
 * @returns the port number.
 * @throws the listen error, if listening fails.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Poll `url` (GET, `accept: application/json`) every 250 ms until it answers 2xx.
 * @param what the process named in the error, e.g. "node-red did not start".
 * @param log read on failure, to put the process's output in the error.
 * @throws {Error} `${what}:\n${log()}` after `timeoutMs` (default 60000).
 */
export async function waitUntilUp(url: string, what: string, log: () => string, timeoutMs = 60000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url, { headers: { accept: 'application/json' } })).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${what}:\n` + log());
    await sleep(250);
  }
}

/** A debug message as the editor's sidebar gets it on `/comms` (`level` is set for node.warn / node.error logs). */
export interface DebugMessage {
  id?: string;
  z?: string;
  name?: string;
  msg?: string;
  format?: string;
  level?: number;
}

/**
 * Subscribe to the debug messages of a running Node-RED on `/comms`, as the editor's sidebar
 * does; with `status`, also to the node statuses (`status/#`), kept per node id in that map.
 * @param base the Node-RED URL, e.g. `http://127.0.0.1:1880`.
 * @returns the array the debug messages are pushed to, and the socket (the caller closes it).
 * @throws the socket's error, if it does not open.
 */
export async function watchDebug(
  base: string,
  status?: Map<string, { text?: string; fill?: string }>,
): Promise<{ debug: DebugMessage[]; ws: WebSocket }> {
  const debug: DebugMessage[] = [];
  const ws = new WebSocket(`${base.replace('http', 'ws')}/comms`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ subscribe: 'debug' }));
  if (status) ws.send(JSON.stringify({ subscribe: 'status/#' }));
  ws.on('message', (data) => {
    const parsed = JSON.parse(data.toString());
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      if (m.topic === 'debug') debug.push(m.data);
      else if (status && typeof m.topic === 'string' && m.topic.startsWith('status/')) status.set(m.topic.slice(7), m.data ?? {});
    }
  });
  return { debug, ws };
}

/** How a {@link RedProcess} is set up. */
export interface RedProcessOptions {
  /** Prefix of the temporary user directory's name, e.g. `cf-e2e-`. */
  prefix: string;
  /** The initial flows.json content (default `[]`). */
  flows?: string | Buffer;
  /** Run with the user directory as working directory (default: this process's). */
  cwdInUserDir?: boolean;
  /**
   * Honour CUSTODYFLOW_E2E_NODE (a node binary) and CUSTODYFLOW_E2E_RED (a red.js) to run
   * another Node / Node-RED pair (default false: this Node and the project's Node-RED).
   */
  runtimeFromEnv?: boolean;
  /** The settings file (default scripts/node-red-settings.js), e.g. one adding adminAuth. */
  settingsFile?: string;
  /** Further environment variables of the process (e.g. the container's, for docker/settings.js). */
  env?: Record<string, string>;
  /** Node.js options placed before red.js on the command line, e.g. `['--expose-gc']` (default none). */
  nodeArgs?: string[];
  /**
   * Link the pack into the user directory (default true). False: the user directory has only
   * what the test put there (the pack installed from its tarball, or nothing).
   */
  linkPack?: boolean;
}

/**
 * A `node-red` child process with the pack symlinked into a fresh user directory
 * (`node_modules/<package name>` → the project root), `PORT` set to a free port and
 * `CUSTODYFLOW_SIMULATOR_DATA` inside the user directory. Its stdout and stderr collect in
 * {@link RedProcess.log}. `new` it and `await start()` in `before`; `await stop()` in `after`.
 */
export class RedProcess {
  /** The combined stdout and stderr so far. */
  log = '';
  /** The child process (undefined until spawned). */
  child: ChildProcess | undefined;
  /** The port Node-RED listens on. */
  port = 0;
  /** `http://127.0.0.1:<port>`. */
  base = '';

  /** The temporary user directory (created by the constructor; removed by {@link RedProcess.stop}). */
  readonly userDir: string;

  /** Create the user directory; nothing is spawned until {@link RedProcess.start}. */
  constructor(private readonly options: RedProcessOptions) {
    this.userDir = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix));
  }

  /**
   * Link the pack into the user directory (unless `linkPack` is false), write flows.json when
   * there is none, spawn Node-RED, and wait until
   * `GET /nodes` answers.
   * @throws {Error} "node-red did not start" with the log, after 60 s.
   */
  async start(): Promise<void> {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const link = path.join(this.userDir, 'node_modules', ...pkg.name.split('/'));
    // A restart (start after stop({keepUserDir: true})) keeps the user directory as Node-RED left it.
    const flowFile = path.join(this.userDir, 'flows.json');
    if (this.options.linkPack !== false && !fs.existsSync(link)) {
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(root, link, 'dir');
      fs.writeFileSync(flowFile, this.options.flows ?? '[]');
    } else if (!fs.existsSync(flowFile)) {
      fs.writeFileSync(flowFile, this.options.flows ?? '[]');
    }
    this.port = await freePort();
    this.base = `http://127.0.0.1:${this.port}`;
    const fromEnv = this.options.runtimeFromEnv === true;
    const nodeBin = (fromEnv && process.env.CUSTODYFLOW_E2E_NODE) || process.execPath;
    const redJs = (fromEnv && process.env.CUSTODYFLOW_E2E_RED) || require.resolve('node-red/red.js', { paths: [root] });
    const child = spawn(nodeBin, [...(this.options.nodeArgs ?? []), redJs, '--userDir', this.userDir, '--settings', this.options.settingsFile ?? path.join(root, 'scripts', 'node-red-settings.js')], {
      ...(this.options.cwdInUserDir ? { cwd: this.userDir } : {}),
      env: { ...process.env, ...this.options.env, PORT: String(this.port), CUSTODYFLOW_SIMULATOR_DATA: path.join(this.userDir, 'simulator') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const mark = this.log.length;
    child.stdout!.on('data', (d) => (this.log += d));
    child.stderr!.on('data', (d) => (this.log += d));
    // With adminAuth (a settings file of the test's) /nodes answers 401; /auth/login answers either way.
    await waitUntilUp(`${this.base}${this.options.settingsFile ? '/auth/login' : '/nodes'}`, 'node-red did not start', () => this.log);
    // The admin API answers before the runtime has started its flows; a deploy sent in between
    // races the start (its credentials were seen lost once in a loaded full run). Wait for it.
    const deadline = Date.now() + 30000;
    const settled = (text: string) => text.includes('Started flows') || text.includes('Waiting for missing types');
    while (!settled(this.log.slice(mark))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`node-red did not start its flows\n${this.log.slice(mark).slice(-3000)}`);
      await sleep(50);
    }
  }

  /**
   * Stop Node-RED (SIGINT, SIGKILL after 10 s) and remove the user directory, unless
   * `keepUserDir` (to {@link RedProcess.start} it again: a restart).
   */
  async stop(opts: { keepUserDir?: boolean } = {}): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await Promise.race([exited, sleep(10000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    if (!opts.keepUserDir) fs.rmSync(this.userDir, { recursive: true, force: true });
  }
}

/**
 * Launch headless Chromium (CHROMIUM_PATH, default /usr/bin/chromium) for the editor tests.
 * The caller closes it (`await browser.close()` in a `finally`).
 */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/**
 * Open the Node-RED editor at `base` in a new page of `browser`.
 * @param viewport the page size in CSS pixels.
 * @returns the page and the array its uncaught script errors (`pageerror`) are pushed to.
 */
export async function openEditor(browser: Browser, base: string, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(base + '/');
  return { page, errors };
}
