/**
 * The "Custody review" sidebar tab as a four-eyes reviewer uses it (docs/nodes.md "custody-review";
 * editor/src/custody-review.ts), in headless Chromium against a started Node-RED with adminAuth,
 * logged in as operators (README "Operator accounts": `["read", "custody.review.read",
 * "custody.review.write"]`). The flow: core client feed -> custody-approver (no rule: everything
 * held) -> custody-review (quorum 2), against the simulator behind a proxy that records every
 * PUT / DELETE of an action: a {@link ReviewRig} of one instance (test/helpers/review-rig.ts).
 *
 * What the reviewer relies on: a held transfer appears in an open tab without reloading (the
 * runtime's `custody/reviews` message; the tab does not poll); its card names the destination, the
 * source fund, the net amount, fee and gross in decimal units, the reference, the deadline and why
 * it was held; Approve asks for a confirmation naming the amount and the destination, cancelling
 * sends nothing, confirming records the vote and says so in a notification; Reject without a
 * reason is refused before anything is sent; texts the API returns are shown as text, never as
 * HTML; every text is the catalog's (no raw key); the two buttons look different, in theme colours.
 * `recent` (the last decided reviews) is checked when the runtime's GET answer carries it.
 *
 * `CUSTODYFLOW_REVIEW_TAB_SCREENSHOTS=1` writes docs/images/review-tab.png (the card after one of
 * two approvals) and docs/images/review-tab-confirm.png (the confirmation), not assertions.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { root } from '../helpers/red-process';
import { demoTransfer } from '../helpers/support';
import { createTransfer } from '../../lib';
import { feeFor } from '../../simulator/assets';
import { OPERATOR, adminCall, editorPageAs } from '../helpers/admin-auth';
import { showReviewTab, useReviewEditor } from '../helpers/review-rig';

const USERS: Record<string, string[]> = { alice: OPERATOR, bob: OPERATOR, admin: ['*'] };
const BTC_SCALE = 8;
const SCREENSHOTS = process.env.CUSTODYFLOW_REVIEW_TAB_SCREENSHOTS === '1';

/** Base units of BTC-TESTNET as the decimal string the tab shows (8 decimals, trailing zeros dropped). */
function btc(base: number): string {
  const s = String(base).padStart(BTC_SCALE + 1, '0');
  const fraction = s.slice(-BTC_SCALE).replace(/0+$/, '');
  return `${s.slice(0, -BTC_SCALE)}${fraction ? '.' + fraction : ''} BTC-TESTNET`;
}

/** A review as `GET /custody/reviews` lists it (the fields this test reads). */
interface Listed {
  action_id: string;
  reasons: string[];
  expireTime: number;
  approvals: number;
  votes: Array<{ reviewer: string; decision: string }>;
  details: { txID?: string; recipientAddress?: string; recipientAddressName?: string; fundID?: string };
}

describe('custody-review sidebar tab: what a reviewer sees and confirms (Chromium, started Node-RED, adminAuth)', function () {
  this.timeout(180000);
  const ed = useReviewEditor({ prefix: 'cf-review-tab-', quorum: 2, users: USERS, faucetBtc: 10, defaultAuditFile: true, review: { name: 'treasury four-eyes', escalateMargin: '60' }, holdMs: (call) => (slow.has(call.action_id ?? '') ? 30000 : 0) });
  /** The instance's node-red. */
  const red = () => ed.rig.instances[0].red;
  /** Actions whose approve / reject answer the proxy holds for 30 s (the final call stays running). */
  const slow = new Set<string>();

  const api = (user: string, method: string, p: string, body?: unknown) => adminCall(red().base, ed.rig.instances[0].tokens[user], method, p, body);
  const decisionCalls = (method: string) => ed.rig.proxy.records.filter((r) => r.method === method && r.action_id !== undefined).length;
  const list = async (): Promise<{ reviews: Listed[]; recent?: Array<{ action_id: string; state: string; decidedBy: string[] }> }> => (await api('alice', 'GET', '/custody/reviews')).json() as never;

  /** The editor as `user`, the review tab shown; `posts` collects every vote the page sends. */
  async function editorAs(user: string): Promise<{ page: Page; posts: string[] }> {
    const page = await editorPageAs(ed.browser, ed.rig.instances[0].tokens[user], { width: 1400, height: 1000 });
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && /\/custody\/reviews\//.test(r.url())) posts.push(r.postData() ?? '');
    });
    await showReviewTab(page, red().base, '.custody-review-user');
    return { page, posts };
  }

  /** Create a transfer of `amount` base units and wait until it is held for review; its listed review. */
  async function held(amount: number, reference: string): Promise<{ tx_id: string; review: Listed }> {
    const tx_id = (await createTransfer(ed.rig.s.client, demoTransfer(ed.rig.s.sim, { send: { symbol: 'BTC-TESTNET', amount }, reference }))).data.tx_id;
    for (let i = 0; i < 600; i++) {
      const review = (await list()).reviews.find((x) => x.details.txID === tx_id);
      if (review) return { tx_id, review };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`transfer ${tx_id} never reached the review queue\n${red().log.slice(-2000)}`);
  }

  const card = (page: Page, actionId: string) => page.locator(`.custody-review-item[data-action-id="${actionId}"]`);
  const confirmation = (page: Page) => page.locator('.red-ui-notification:has(.custody-review-confirm)');

  /** Wait until Node-RED removed the closed confirmation (it slides up first). */
  const confirmationGone = (page: Page) => page.waitForSelector('.red-ui-notification .custody-review-confirm', { state: 'detached', timeout: 10000 });

  /** Click `button` of card `c` in `page` and wait for the confirmation the tab asks (10 s at most); the confirmation and its text. */
  async function confirmationFor(page: Page, c: ReturnType<typeof card>, button: 'approve' | 'reject'): Promise<{ dialog: Locator; asked: string }> {
    await c.locator(`.custody-review-${button}`).click();
    const dialog = confirmation(page);
    await dialog.waitFor({ timeout: 10000 });
    return { dialog, asked: await dialog.innerText() };
  }

  /** The text of the vote's result notification in `page` once it shows (30 s at most); `kind` `-error` for an error notification. */
  async function resultText(page: Page, kind: '' | '-error' = ''): Promise<string> {
    const notice = page.locator(`.red-ui-notification${kind} .custody-review-result`);
    await notice.waitFor({ timeout: 30000 });
    return notice.innerText();
  }

  /** A picture (not an assertion) into docs/images/`file` (or `file` when absolute): `c` scrolled to the top of the tab, animations settled. */
  async function screenshot(page: Page, c: ReturnType<typeof card>, file: string): Promise<void> {
    await c.evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(800);
    await page.screenshot({ path: path.resolve(root, 'docs', 'images', file) });
  }


  it('the tab source sets no colour of its own: every colour is a Node-RED theme variable', () => {
    const src = fs.readFileSync(path.join(root, 'editor', 'src', 'custody-review.ts'), 'utf8');
    assert.doesNotMatch(src, /#[0-9a-f]{3,8}\b(?![\w-])|\brgba?\(|\bhsla?\(/i, 'no hex, rgb() or hsl() colour');
    const colours = [...src.matchAll(/(?:^|[;{\s])(color|background|border(?:-left)?(?:-color)?)\s*:\s*([^;]+);/g)].map((m) => m[2]);
    assert.ok(colours.length >= 10, `found ${colours.length} colour declarations`);
    for (const c of colours) assert.match(c, /var\(--red-ui-[\w-]+\)/, `"${c}" reads a theme variable`);
  });

  it('a held 0.9 BTC-TESTNET transfer appears in the open tab (no reload, no polling) and its card says where the money goes, from where, how much, why and until when', async () => {
    const alice = await editorAs('alice');
    const before = alice.posts.length;
    const net = 90_000_000;
    const { review } = await held(net, 'invoice 4711');
    const c = card(alice.page, review.action_id);
    await c.waitFor({ timeout: 30000 });
    const text = await c.innerText();
    const { fees, amountToSend } = feeFor(net);
    assert.ok(fees > 0);
    assert.equal(review.details.recipientAddress, ed.rig.s.sim.demo.counterparty.wallets['BTC-TESTNET'].wallet_id);
    assert.ok(review.details.recipientAddressName, 'the simulator names the recipient');
    const rows = async (cls: string) => (await c.locator(`dd.${cls}`).innerText()).trim();
    assert.match(await rows('custody-review-to'), new RegExp(`${review.details.recipientAddressName}[\\s\\S]*wallet ${review.details.recipientAddress}`), 'destination: name and wallet id');
    assert.equal(await rows('custody-review-from'), `fund ${review.details.fundID}`);
    assert.equal(await rows('custody-review-net'), btc(net));
    assert.equal(await rows('custody-review-fee'), btc(fees));
    assert.equal(await rows('custody-review-gross'), btc(amountToSend));
    assert.match(text, /invoice 4711/);
    assert.match(text, /Test customer/, 'benefit of');
    assert.match(text, /ACC-1/, 'account number');
    assert.match(text, /treasury four-eyes/, 'the review node by its name');
    assert.match(await rows('custody-review-approvals'), /^0 of 2$/);
    assert.ok(review.reasons.length > 0);
    for (const r of review.reasons) assert.ok(text.includes(r), `held because: ${r}`);
    assert.ok(review.expireTime > Date.now() / 1000, 'a deadline ahead');
    const deadline = c.locator('.custody-review-deadline');
    assert.equal(await deadline.getAttribute('data-at'), String(review.expireTime * 1000));
    assert.match(await deadline.innerText(), /\(in \d+ (min|h)\)$/, 'the deadline, relative');
    assert.match(await c.locator('.custody-review-title').innerText(), new RegExp(`^${btc(net).replace('.', '\\.')} to `), 'the headline: amount to destination');
    const all = await alice.page.locator('.custody-review-tab').innerText();
    assert.doesNotMatch(all, /custody-review\.tab\./, 'every text is the catalog\'s (no raw key)');
    assert.equal(alice.posts.length, before, 'reading sends no vote');
    await alice.page.context().close();
  });

  it('Approve asks for a confirmation naming net, gross and destination; cancelling sends nothing; confirming records the vote and a notification says it (1 of 2); bob completes it and it leaves the open list', async () => {
    const alice = await editorAs('alice');
    const net = 90_000_000;
    const { tx_id, review } = await held(net, 'payroll march');
    const c = card(alice.page, review.action_id);
    await c.waitFor({ timeout: 30000 });

    // The two buttons look different (theme colours; checked in the page as rendered).
    const look = await alice.page.evaluate((id) => {
      const get = (cls: string) => getComputedStyle(document.querySelector(`.custody-review-item[data-action-id="${id}"] .${cls}`) as Element);
      const a = get('custody-review-approve');
      const r = get('custody-review-reject');
      return { approve: [a.backgroundColor, a.borderTopColor, a.color], reject: [r.backgroundColor, r.borderTopColor, r.color] };
    }, review.action_id);
    assert.notDeepEqual(look.approve, look.reject, 'Approve and Reject look different');
    assert.notEqual(look.approve[0], look.reject[0], 'different backgrounds');

    const { dialog, asked } = await confirmationFor(alice.page, c, 'approve');
    assert.match(asked, new RegExp(`Approve sending ${btc(net).replace('.', '\\.')} to `));
    assert.ok(asked.includes(review.details.recipientAddress!), 'names the destination wallet');
    assert.ok(asked.includes(review.details.recipientAddressName!), 'names the destination');
    assert.ok(asked.includes(btc(feeFor(net).amountToSend)), 'repeats the gross');
    assert.ok(asked.includes(`fund ${review.details.fundID}`), 'names the source');
    if (SCREENSHOTS) await screenshot(alice.page, c, 'review-tab-confirm.png');
    await dialog.locator('.custody-review-cancel').click();
    await confirmationGone(alice.page);
    assert.deepEqual(alice.posts, [], 'cancelled: nothing sent');
    assert.deepEqual((await list()).reviews.find((r) => r.action_id === review.action_id)?.votes, [], 'no vote stored');

    await c.locator('.custody-review-approve').click();
    await confirmation(alice.page).locator('.custody-review-confirm-approve').click();
    await confirmationGone(alice.page);
    assert.match(await resultText(alice.page), new RegExp(`^Approved: ${btc(net).replace('.', '\\.')} to .*${review.details.recipientAddress}.*\\(1 of 2\\)`));
    assert.equal(alice.posts.length, 1, 'one vote sent');
    assert.deepEqual(JSON.parse(alice.posts[0]), { decision: 'approve', via: 'editor' });
    await alice.page.waitForFunction((id) => /alice approved \(editor\)/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"] .custody-review-votes`)?.textContent ?? ''), review.action_id, { timeout: 30000 });
    assert.match(await c.locator('dd.custody-review-approvals').innerText(), /^1 of 2$/);
    assert.deepEqual((await list()).reviews.find((r) => r.action_id === review.action_id)?.votes.map((v) => [v.reviewer, v.decision]), [['alice', 'approve']]);
    assert.equal(decisionCalls('PUT'), 0, 'one approval of two: no PUT');
    if (SCREENSHOTS) {
      await alice.page.waitForSelector('.red-ui-notification .custody-review-result', { state: 'detached', timeout: 30000 }).catch(() => undefined);
      await screenshot(alice.page, c, 'review-tab.png');
      if (process.env.CUSTODYFLOW_REVIEW_TAB_DARK) {
        // A rough dark look (a few of the theme's variables set dark in the page), to see that the tab follows them.
        await alice.page.addStyleTag({ content: ':root{--red-ui-primary-background:#1f1f1f;--red-ui-secondary-background:#2b2b2b;--red-ui-primary-text-color:#ddd;--red-ui-secondary-text-color:#aaa;--red-ui-secondary-border-color:#444;--red-ui-form-input-background:#333;--red-ui-form-text-color:#ddd;--red-ui-form-input-border-color:#555;--red-ui-text-color-error:#ff6b6b;--red-ui-text-color-success:#2e8b2e;--red-ui-text-color-warning:#d9b600;--red-ui-text-color-link:#58a6ff;--red-ui-workspace-button-background:#333;--red-ui-workspace-button-color:#ccc}' });
        await screenshot(alice.page, c, process.env.CUSTODYFLOW_REVIEW_TAB_DARK);
      }
    }

    // bob's vote, through the API: alice's open tab follows (the runtime's custody/reviews message).
    const puts = decisionCalls('PUT');
    const bob = await api('bob', 'POST', `/custody/reviews/${review.action_id}`, { decision: 'approve' });
    assert.equal(bob.status, 200, await bob.text());
    await alice.page.waitForFunction((id) => !document.querySelector(`.custody-review-item[data-action-id="${id}"]`), review.action_id, { timeout: 30000 });
    for (let i = 0; i < 300 && decisionCalls('PUT') === puts; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(decisionCalls('PUT'), puts + 1, 'one PUT');
    void tx_id;
    await alice.page.context().close();
  });

  it('Reject without a reason is refused in the tab (nothing sent); with one, the confirmation repeats amount, destination and reason, and the reject is recorded', async () => {
    const bob = await editorAs('bob');
    const net = 12_345_678;
    const { review } = await held(net, 'refund 17');
    const c = card(bob.page, review.action_id);
    await c.waitFor({ timeout: 30000 });
    await c.locator('.custody-review-reject').click();
    assert.match(await c.locator('.custody-review-error').innerText(), /a reject needs a reason/);
    assert.equal(await bob.page.locator('.red-ui-notification .custody-review-confirm').count(), 0, 'no confirmation asked');
    assert.deepEqual(bob.posts, [], 'nothing sent');

    await c.locator('.custody-review-reason').fill('beneficiary not on the invoice');
    const deletes = decisionCalls('DELETE');
    const { dialog, asked } = await confirmationFor(bob.page, c, 'reject');
    assert.match(asked, new RegExp(`Reject sending ${btc(net).replace('.', '\\.')} to `));
    assert.ok(asked.includes(review.details.recipientAddress!), 'names the destination wallet');
    assert.match(asked, /Reason: beneficiary not on the invoice/);
    await dialog.locator('.custody-review-confirm-reject').click();
    assert.match(await resultText(bob.page), new RegExp(`^Rejected: ${btc(net).replace('.', '\\.')} to `));
    assert.deepEqual(JSON.parse(bob.posts[0]), { decision: 'reject', reason: 'beneficiary not on the invoice', via: 'editor' });
    for (let i = 0; i < 300 && decisionCalls('DELETE') === deletes; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(decisionCalls('DELETE'), deletes + 1, 'one DELETE');
    await bob.page.context().close();
  });

  it('a 409 from the API (a second approval by the same reviewer) is shown as the API\'s text, in a notification and under the card', async () => {
    const alice = await editorAs('alice');
    const { review } = await held(1_000_000, 'twice');
    const first = await api('alice', 'POST', `/custody/reviews/${review.action_id}`, { decision: 'approve' });
    assert.equal(first.status, 200);
    const c = card(alice.page, review.action_id);
    await alice.page.waitForFunction((id) => /alice approved/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"]`)?.textContent ?? ''), review.action_id, { timeout: 30000 });
    await c.locator('.custody-review-approve').click();
    await confirmation(alice.page).locator('.custody-review-confirm-approve').click();
    assert.match(await resultText(alice.page, '-error'), /^Not recorded: .*already approved by you/);
    await alice.page.waitForFunction((id) => /already approved by you/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"] .custody-review-error`)?.textContent ?? ''), review.action_id, { timeout: 30000 });
    await alice.page.context().close();
  });

  it('what the API returns is shown as text: a reference that looks like HTML runs nothing, in the card and in the confirmation', async () => {
    const alice = await editorAs('alice');
    const reference = '<img src=x onerror="window.__custodyXss=1">inv';
    const { review } = await held(2_000_000, reference);
    const c = card(alice.page, review.action_id);
    await c.waitFor({ timeout: 30000 });
    assert.ok((await c.innerText()).includes(reference), 'the reference, as typed');
    assert.equal(await c.locator('img').count(), 0);
    await confirmationFor(alice.page, c, 'approve');
    assert.equal(await alice.page.locator('.red-ui-notification img').count(), 0);
    await confirmation(alice.page).locator('.custody-review-cancel').click();
    assert.equal(await alice.page.evaluate(() => (window as any).__custodyXss), undefined);
    assert.deepEqual(alice.posts, []);
    await alice.page.context().close();
  });

  it('while the final call runs (state calling) the tab shows "being decided" and no buttons, and the vote that completed the quorum says so (needs the contract\'s runtime: POST answers at once)', async function () {
    if (!Array.isArray((await list()).recent)) this.skip(); // the runtime before the contract (its POST waits for the final call)
    const alice = await editorAs('alice');
    const net = 4_000_000;
    const { review } = await held(net, 'slow call');
    slow.add(review.action_id);
    assert.equal((await api('bob', 'POST', `/custody/reviews/${review.action_id}`, { decision: 'approve' })).status, 200);
    const c = card(alice.page, review.action_id);
    await alice.page.waitForFunction((id) => /bob approved/.test(document.querySelector(`.custody-review-item[data-action-id="${id}"]`)?.textContent ?? ''), review.action_id, { timeout: 30000 });
    await c.locator('.custody-review-approve').click();
    await confirmation(alice.page).locator('.custody-review-confirm-approve').click();
    assert.match(await resultText(alice.page), new RegExp(`^Approved: ${btc(net).replace('.', '\\.')} to .*\\(2 of 2\\): being decided$`));
    await alice.page.waitForFunction((id) => document.querySelector(`.custody-review-item[data-action-id="${id}"]`)?.getAttribute('data-state') === 'calling', review.action_id, { timeout: 30000 });
    assert.ok(ed.rig.proxy.inFlight().some((r) => r.action_id === review.action_id), 'the PUT is still running');
    assert.equal(await c.locator('button').count(), 0, 'no buttons while it is being decided');
    assert.equal(await c.locator('.custody-review-reason').count(), 0);
    assert.equal(await c.locator('.custody-review-badge-calling').innerText(), 'being decided');
    await alice.page.context().close();
  });

  it('"Recently decided" lists a decided review: its state, who decided, when, amount and destination (needs `recent` in the GET answer)', async function () {
    const answer = await list();
    if (!Array.isArray(answer.recent)) this.skip(); // the runtime before the contract's `recent` (docs: /custody/reviews)
    const alice = await editorAs('alice');
    const net = 3_000_000;
    const { review } = await held(net, 'recent one');
    await card(alice.page, review.action_id).waitFor({ timeout: 30000 });
    for (const u of ['alice', 'bob']) assert.equal((await api(u, 'POST', `/custody/reviews/${review.action_id}`, { decision: 'approve' })).status, 200);
    const item = alice.page.locator(`.custody-review-recent-item[data-action-id="${review.action_id}"]`);
    await item.waitFor({ timeout: 30000 });
    await alice.page.waitForFunction((id) => document.querySelector(`.custody-review-recent-item[data-action-id="${id}"]`)?.getAttribute('data-state') === 'approved', review.action_id, { timeout: 30000 });
    const text = await item.innerText();
    assert.match(text, /approved/);
    assert.match(text, /by alice, bob/);
    assert.ok(text.includes(btc(net)), 'the amount');
    assert.ok(text.includes(review.details.recipientAddress!), 'the destination');
    assert.match(text, /\d+ s ago|\d+ min ago/, 'when');
    await alice.page.context().close();
  });
});
