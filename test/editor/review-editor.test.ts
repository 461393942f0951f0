/**
 * The "Custody review" sidebar tab and the admin API of `custody-review` in headless Chromium
 * against a started Node-RED with adminAuth (docs/nodes.md "custody-review"; operator accounts in
 * README "Operator accounts"): two operators (alice, bob) with `["read", "custody.review.read",
 * "custody.review.write"]`, an admin (`*`) who deploys, and a viewer with `read` only. Node-RED's
 * own login (`POST /auth/token`, client `node-red-editor`, grant `password`) gives each a token;
 * the editor page gets it as the login form would leave it (localStorage `auth-tokens`).
 * The flow: core client feed -> custody-approver (no rule: everything held) -> custody-review
 * (quorum 2, its audit where the node keeps it by default), against a simulator started here
 * behind a proxy that records every request (the PUTs and DELETEs counted): a {@link ReviewRig}
 * of one instance (test/helpers/review-rig.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { root } from '../helpers/red-process';
import { demoTransfer } from '../helpers/support';
import { createTransfer, getTransfer } from '../../lib';
import { OPERATOR, adminCall, editorPageAs } from '../helpers/admin-auth';
import { showReviewTab, useReviewEditor } from '../helpers/review-rig';

const USERS: Record<string, string[]> = { alice: OPERATOR, bob: OPERATOR, admin: ['*'], viewer: ['read'] };
const AUDIT_CLI = path.join(root, 'dist', 'lib', 'audit', 'cli.js');

describe('custody-review sidebar tab and admin API with adminAuth (Chromium, started Node-RED)', function () {
  this.timeout(180000);
  const ed = useReviewEditor({ prefix: 'cf-review-ed-', quorum: 2, users: USERS, faucetBtc: 10, defaultAuditFile: true, review: { escalateMargin: '60' } });
  /** The instance's node-red. */
  const red = () => ed.rig.instances[0].red;

  const api = (user: string, method: string, p: string, body?: unknown) => adminCall(red().base, ed.rig.instances[0].tokens[user], method, p, body);

  const decisionCalls = (method: string) => ed.rig.proxy.records.filter((r) => r.method === method && r.action_id !== undefined).length;

  /** Open the editor as `user` (its token where the login form leaves it) with the review tab shown. */
  async function editorAs(user: string): Promise<Page> {
    const page = await editorPageAs(ed.browser, ed.rig.instances[0].tokens[user], { width: 1400, height: 900 });
    await showReviewTab(page, red().base);
    return page;
  }

  async function heldTransfer(amount: number): Promise<{ tx_id: string; action_id: string }> {
    const tx_id = (await createTransfer(ed.rig.s.client, demoTransfer(ed.rig.s.sim, { send: { symbol: 'BTC-TESTNET', amount } }))).data.tx_id;
    for (let i = 0; i < 600; i++) {
      const list = (await (await api('alice', 'GET', '/custody/reviews')).json()) as { reviews: Array<{ action_id: string; details: { txID?: string } }> };
      const r = list.reviews.find((x) => x.details.txID === tx_id);
      if (r) return { tx_id, action_id: r.action_id };
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`transfer ${tx_id} never reached the review queue\n${red().log.slice(-2000)}`);
  }

  async function txStatus(tx_id: string, want: string): Promise<string> {
    let last = '';
    for (let i = 0; i < 300 && last !== want; i++) {
      last = String(((await getTransfer(ed.rig.s.client, { company_id: ed.rig.s.sim.demo.company_id, tx_id })).data as any).txStatus);
      if (last !== want) await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  }

  const card = (page: Page, actionId: string) => page.locator(`.custody-review-item[data-action-id="${actionId}"]`);

  /** Click the card's `button` (approve or reject) and confirm in the modal notification the tab asks in. */
  async function voteIn(page: Page, actionId: string, button: 'approve' | 'reject'): Promise<void> {
    await card(page, actionId).locator(`.custody-review-${button}`).click();
    await page.locator(`.red-ui-notification .custody-review-confirm-${button}`).click();
    // Node-RED removes a closed notification after it slid up: wait, so the next confirmation is the only one.
    await page.waitForSelector('.red-ui-notification .custody-review-confirm', { state: 'detached', timeout: 10000 });
  }


  it('quorum 2: a held 2 BTC-TESTNET transfer shows in alice\'s tab; alice approves (still pending, no PUT); alice again is refused; bob approves: one PUT, approved_transfer; the audit names both and verifies', async () => {
    const { tx_id, action_id } = await heldTransfer(200_000_000);
    const alice = await editorAs('alice');
    await card(alice, action_id).waitFor({ timeout: 30000 });
    assert.match(await card(alice, action_id).innerText(), /2 BTC-TESTNET/);
    assert.match(await alice.locator('.custody-review-user').innerText(), /Voting as alice/);
    await voteIn(alice, action_id, 'approve');
    await alice.waitForFunction((id) => /alice approved/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"]`)?.textContent ?? ''), action_id, { timeout: 30000 });
    assert.equal(decisionCalls('PUT'), 0, 'one approval of two: no PUT');
    // CUSTODYFLOW_SCREENSHOT=<file.png>: the README's picture of the tab, taken here (not an assertion).
    if (process.env.CUSTODYFLOW_SCREENSHOT) await alice.screenshot({ path: process.env.CUSTODYFLOW_SCREENSHOT });
    assert.equal(await txStatus(tx_id, 'pending_transfer'), 'pending_transfer');
    await voteIn(alice, action_id, 'approve');
    await alice.waitForFunction((id) => /already approved by you/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"] .custody-review-error`)?.textContent ?? ''), action_id, { timeout: 30000 });
    const again = await api('alice', 'POST', `/custody/reviews/${action_id}`, { decision: 'approve' });
    assert.equal(again.status, 409);
    assert.match(((await again.json()) as { error: string }).error, /already approved by you/);
    assert.equal(decisionCalls('PUT'), 0);
    const bob = await editorAs('bob');
    await card(bob, action_id).waitFor({ timeout: 30000 });
    await voteIn(bob, action_id, 'approve');
    assert.equal(await txStatus(tx_id, 'approved_transfer'), 'approved_transfer');
    assert.equal(decisionCalls('PUT'), 1, 'exactly one PUT');
    await alice.waitForFunction((id) => !document.querySelector(`.custody-review-item[data-action-id="${id}"]`), action_id, { timeout: 30000 });
    const auditFile = path.join(red().userDir, 'custodyflow-audit', 'rv.jsonl');
    const lines = fs.readFileSync(auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.action_id === action_id);
    assert.deepEqual(lines.filter((l) => l.event === 'vote').map((l) => [l.reviewer, l.decision, l.via]), [['alice', 'approve', 'editor'], ['bob', 'approve', 'editor']]);
    assert.deepEqual(lines.filter((l) => l.event === 'call').map((l) => l.method), ['PUT']);
    const v = spawnSync(process.execPath, [AUDIT_CLI, 'verify', path.join(red().userDir, 'custodyflow-audit')], { encoding: 'utf8' });
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  it('a reject with a reason by one operator: one DELETE and custody_rejected_transfer', async () => {
    const deletes = decisionCalls('DELETE');
    const { tx_id, action_id } = await heldTransfer(10_000_000);
    const bob = await editorAs('bob');
    await card(bob, action_id).waitFor({ timeout: 30000 });
    await card(bob, action_id).locator('.custody-review-reject').click();
    await bob.waitForFunction((id) => /a reject needs a reason/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"] .custody-review-error`)?.textContent ?? ''), action_id, { timeout: 30000 });
    assert.equal(decisionCalls('DELETE'), deletes, 'no reason: nothing called');
    await card(bob, action_id).locator('.custody-review-reason').fill('beneficiary not on the invoice');
    await voteIn(bob, action_id, 'reject');
    assert.equal(await txStatus(tx_id, 'custody_rejected_transfer'), 'custody_rejected_transfer');
    assert.equal(decisionCalls('DELETE'), deletes + 1, 'exactly one DELETE');
  });

  it('a user without the write scope gets 403 from the API and sees no buttons', async () => {
    const { action_id } = await heldTransfer(10_000_000);
    const denied = await api('viewer', 'POST', `/custody/reviews/${action_id}`, { decision: 'approve' });
    assert.equal(denied.status, 403);
    const viewer = await editorAs('viewer');
    await card(viewer, action_id).waitFor({ timeout: 30000 });
    assert.equal(await card(viewer, action_id).locator('button').count(), 0);
    assert.match(await viewer.locator('.custody-review-readonly').innerText(), /not vote/);
  });
});
