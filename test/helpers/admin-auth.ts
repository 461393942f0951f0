/**
 * Node-RED with adminAuth for the tests of a started `node-red` (docs/nodes.md "custody-review",
 * operator accounts): a settings file that is the project's (scripts/node-red-settings.js) plus
 * adminAuth over test users (`users` and `authenticate` as functions, so no password hash is
 * needed), and Node-RED's own login (`POST /auth/token`, client `node-red-editor`, grant `password`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from './red-process';

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
