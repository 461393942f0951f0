/**
 * Node-RED with adminAuth for the tests of a started `node-red` (docs/nodes.md "custody-review",
 * operator accounts): a settings file that is the project's (scripts/node-red-settings.js) plus
 * adminAuth over test users (`users` and `authenticate` as functions, so no password hash is
 * needed), and Node-RED's own login (`POST /auth/token`, client `node-red-editor`, grant `password`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { RedProcess, root } from './red-process';

/** The password of every test user (no secret: test users of a loopback Node-RED). */
export const TEST_PASSWORD = 'test-password-not-secret';

/** The permissions of an operator who reviews but cannot deploy. */
export const OPERATOR = ['read', 'custody.review.read', 'custody.review.write'];

/**
 * Write `settings-adminauth.js` into `dir`.
 * @param users permissions by user name.
 * @returns the file's path (RedProcessOptions.settingsFile).
 */
export function writeAdminAuthSettings(dir: string, users: Record<string, string[] | string>): string {
  const file = path.join(dir, 'settings-adminauth.js');
  fs.writeFileSync(
    file,
    `'use strict';
const base = require(${JSON.stringify(path.join(root, 'scripts', 'node-red-settings.js'))});
const USERS = ${JSON.stringify(users)};
const user = (u) => (USERS[u] ? { username: u, permissions: USERS[u] } : null);
module.exports = { ...base, adminAuth: { type: 'credentials', users: async (u) => user(u), authenticate: async (u, p) => (p === ${JSON.stringify(TEST_PASSWORD)} ? user(u) : null) } };
`,
  );
  return file;
}

/** Log `username` in to the Node-RED at `base`. @returns the access token. */
export async function loginToken(base: string, username: string): Promise<string> {
  const res = await fetch(`${base}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'node-red-editor', grant_type: 'password', scope: '', username, password: TEST_PASSWORD }) });
  const text = await res.text();
  assert.equal(res.status, 200, `login ${username}: ${text}`);
  return (JSON.parse(text) as { access_token: string }).access_token;
}

/** An admin API call to `base` with `token`. */
export function adminCall(base: string, token: string, method: string, p: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** A started `node-red` with adminAuth and an access token of each of its users. */
export interface AdminRed {
  red: RedProcess;
  /** Each user's access token, by user name. */
  tokens: Record<string, string>;
}

/**
 * Start a `node-red` (user directory named with `prefix`) with adminAuth over `users`
 * ({@link writeAdminAuthSettings} into `settingsDir`), and log each user in ({@link loginToken}).
 * @throws an assertion error when a login fails (the process is stopped first); what `RedProcess.start` throws.
 */
export async function startAdminRed(prefix: string, settingsDir: string, users: Record<string, string[] | string>): Promise<AdminRed> {
  const red = new RedProcess({ prefix, settingsFile: writeAdminAuthSettings(settingsDir, users) });
  await red.start();
  try {
    const tokens: Record<string, string> = {};
    for (const u of Object.keys(users)) tokens[u] = await loginToken(red.base, u);
    return { red, tokens };
  } catch (e) {
    await red.stop();
    throw e;
  }
}

/**
 * A new page of `browser` (its own context, `viewport` in CSS pixels) logged in with `token` as
 * Node-RED's login form leaves it (localStorage `auth-tokens`). It has not navigated yet, so that
 * the caller can listen to its requests first.
 */
export async function editorPageAs(browser: Browser, token: string, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript((t: string) => localStorage.setItem('auth-tokens', JSON.stringify({ access_token: t, expires_in: 604800, token_type: 'Bearer' })), token);
  return context.newPage();
}
