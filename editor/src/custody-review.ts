/**
 * The "Custody review" sidebar tab of `custody-review` (docs/nodes.md "custody-review"): the open
 * reviews of every review node, read from the admin API `GET custody/reviews` (scope
 * `custody.review.read`) and read again whenever the runtime publishes on the `RED.comms` topic
 * `custody/reviews` (one message per change of any review, from every runtime; no polling).
 *
 * Each review is a card that says where the money goes: the destination (wallet id or L1 address,
 * with its name), the source fund or wallet, net amount, fee and gross in decimal units of the
 * asset, reference, benefit of, account number, the initiator, why it was held, the deadline (time
 * and relative), the review node, the votes so far and approvals N of M. A user holding
 * `custody.review.write` gets Approve / Reject; each asks for a confirmation that repeats the
 * amounts and the destination, and a reject needs a reason (refused here before anything is sent,
 * as the API refuses it with 400). Votes go to `POST custody/reviews/{action_id}`; the result, or
 * the API's error text, is shown as a notification. Below the open reviews: the last decided ones
 * (`recent` of the GET answer).
 *
 * The facts come from `facts` of each review (decimal strings in units of `asset`); a runtime that
 * answers without `facts` is read from the action's `details` (spec section 2 "Action" detail
 * fields, base units) instead, converted with the scale implied by the review's `amount`.
 * Every text is from the node's message catalog (nodes/custody-review/locales, `custody-review.tab`);
 * every colour is a Node-RED theme variable.
 */

/** A vote as the API lists it. */
interface VoteView {
  reviewer: string;
  decision: 'approve' | 'reject';
  reason?: string;
  /** ISO time. */
  at: string;
  via: string;
}

/** Where the money goes: an L2 wallet id or short code (`wallet`), an L1 address (`address`). */
interface Destination {
  kind: 'wallet' | 'address' | 'unknown';
  value: string;
  name?: string;
}

/** What a reviewer decides on, in decimal units of `asset` (`GET custody/reviews` `facts`). */
interface Facts {
  asset?: string;
  net?: string;
  fee?: string;
  gross?: string;
  destination: Destination;
  source: { fundID?: string; walletID?: string };
  reference?: string;
  benefitOf?: string;
  accountNo?: string;
  initiator?: string;
}

/** A review as `GET custody/reviews` lists it (`state` and `facts` may be missing on older runtimes). */
interface ReviewItem {
  action_id: string;
  client_id: string;
  type?: string;
  state?: 'open' | 'calling';
  amount?: { asset: string; decimal: string };
  details: Record<string, unknown>;
  facts?: Facts;
  reasons: string[];
  initiatedBy?: string;
  initiatorName?: string;
  /** Epoch seconds, 0 none. */
  expireTime: number;
  required: number;
  approvals: number;
  votes: VoteView[];
  escalated?: boolean;
  node?: string;
  nodeName?: string;
}

/** A decided review (`GET custody/reviews` `recent`, newest first). */
interface RecentItem {
  action_id: string;
  client_id: string;
  node: string;
  nodeName: string;
  state: 'approved' | 'rejected' | 'expired' | 'failed' | 'decidedElsewhere';
  decidedBy: string[];
  /** ISO time it closed. */
  at: string;
  why?: string;
  facts?: Facts;
}

/** The answer of `GET custody/reviews`. */
interface ReviewList {
  user: string;
  adminAuth: boolean;
  reviews: ReviewItem[];
  recent?: RecentItem[];
}

/** The parts of the editor API this tab uses beyond editor/src/red.d.ts (Node-RED 4 ui/notifications.js, ui/view.js, i18n). */
interface NotifyButton {
  text: string;
  class?: string;
  click: () => void;
}
interface Notification {
  close(): void;
}
const editor = RED as unknown as {
  _: (key: string, substitutions?: Record<string, unknown>) => string;
  notify(msg: JQuery, options: { type?: 'error' | 'warning' | 'success' | 'compact'; modal?: boolean; fixed?: boolean; timeout?: number; buttons?: NotifyButton[] }): Notification;
  view?: { reveal?: (id: string) => void };
};

/** The message catalog namespace of the custody-review node set (Node-RED: `<module>/<set>`, the set's id). */
const NAMESPACE = '@custodyflow/node-red-custody/custody-review';

/**
 * A text of the node's catalog (`key`: `custody-review.tab.<name>`, a literal, so test/nodes/i18n.test.ts
 * checks it against the catalog), with its `__name__` placeholders filled from `substitutions`.
 */
function t(key: string, substitutions?: Record<string, unknown>): string {
  return editor._(`${NAMESPACE}:${key}`, substitutions);
}

const STYLE = `
.custody-review-tab { padding: 8px; overflow-y: auto; height: 100%; box-sizing: border-box; color: var(--red-ui-primary-text-color); }
.custody-review-tab h4 { margin: 12px 0 6px; font-size: 13px; color: var(--red-ui-secondary-text-color); text-transform: uppercase; letter-spacing: 0.03em; }
.custody-review-user, .custody-review-readonly, .custody-review-empty { margin-bottom: 6px; color: var(--red-ui-secondary-text-color); }
.custody-review-denied { color: var(--red-ui-text-color-error); }
.custody-review-item { border: 1px solid var(--red-ui-secondary-border-color); border-left: 4px solid var(--red-ui-text-color-warning); border-radius: 4px; padding: 8px; margin-bottom: 10px; background: var(--red-ui-secondary-background); }
.custody-review-item.custody-review-calling { border-left-color: var(--red-ui-text-color-link); }
.custody-review-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px; margin-bottom: 6px; }
.custody-review-title { font-weight: bold; font-size: 15px; color: var(--red-ui-primary-text-color); overflow-wrap: anywhere; }
.custody-review-badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px; line-height: 17px; border: 1px solid var(--red-ui-secondary-border-color); color: var(--red-ui-secondary-text-color); background: var(--red-ui-primary-background); }
.custody-review-badge-calling { border-color: var(--red-ui-text-color-link); color: var(--red-ui-text-color-link); }
.custody-review-badge-escalated, .custody-review-badge-rejected, .custody-review-badge-failed { border-color: var(--red-ui-text-color-error); color: var(--red-ui-text-color-error); }
.custody-review-badge-approved { border-color: var(--red-ui-text-color-success); color: var(--red-ui-text-color-success); }
.custody-review-facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 8px; margin: 0 0 6px; }
.custody-review-facts dt { color: var(--red-ui-secondary-text-color); font-weight: normal; }
.custody-review-facts dd { margin: 0; overflow-wrap: anywhere; }
.custody-review-facts .custody-review-to { font-weight: bold; }
.custody-review-code { font-family: var(--red-ui-monospace-font, monospace); font-size: 12px; }
.custody-review-to-value { display: block; font-weight: normal; }
.custody-review-facts ul { margin: 0; padding-left: 16px; }
.custody-review-late { color: var(--red-ui-text-color-error); }
.custody-review-votes { margin: 2px 0 6px 16px; padding: 0; }
.custody-review-tab input.custody-review-reason { width: 100%; box-sizing: border-box; margin: 2px 0 6px; background: var(--red-ui-form-input-background); color: var(--red-ui-form-text-color); border: 1px solid var(--red-ui-form-input-border-color); }
.custody-review-tab input.custody-review-reason.custody-review-missing { border-color: var(--red-ui-form-input-border-error-color); }
.custody-review-actions { display: flex; gap: 8px; }
.custody-review-tab button.red-ui-button.custody-review-approve { background: var(--red-ui-text-color-success); border-color: var(--red-ui-text-color-success); color: var(--red-ui-workspace-button-color-primary) !important; font-weight: bold; }
.custody-review-tab button.red-ui-button.custody-review-reject { background: var(--red-ui-form-input-background); border-color: var(--red-ui-text-color-error); color: var(--red-ui-text-color-error) !important; }
.custody-review-tab button.red-ui-button.custody-review-approve:not(.disabled):not(:disabled):hover { background: var(--red-ui-text-color-success); color: var(--red-ui-workspace-button-color-primary) !important; filter: brightness(0.9); }
.custody-review-tab button.red-ui-button.custody-review-reject:not(.disabled):not(:disabled):hover { background: var(--red-ui-secondary-background-hover); color: var(--red-ui-text-color-error) !important; }
.custody-review-error { color: var(--red-ui-text-color-error); margin-top: 4px; }
.custody-review-error:empty { display: none; }
.custody-review-tab ul.custody-review-recent { list-style: none; margin: 0; padding: 0; }
.custody-review-recent-item { border-bottom: 1px solid var(--red-ui-secondary-border-color); padding: 4px 0; overflow-wrap: anywhere; }
.custody-review-recent-item .custody-review-meta, .custody-review-meta { color: var(--red-ui-secondary-text-color); font-size: 12px; }
.custody-review-confirm-text p { margin: 0 0 6px; }
.red-ui-notification .ui-dialog-buttonset button.custody-review-confirm-approve, .red-ui-notification .ui-dialog-buttonset button.custody-review-confirm-approve:not(.disabled):not(:disabled):hover { background: var(--red-ui-text-color-success); border-color: var(--red-ui-text-color-success); color: var(--red-ui-workspace-button-color-primary) !important; }
.custody-review-confirm-text .custody-review-confirm-main { font-weight: bold; }
`;

/** The tab's content. */
const content = $('<div class="custody-review-tab"></div>');

/** The reason typed into each card (by action id), kept across the re-renders a change causes. */
const drafts = new Map<string, string>();

/** The last refusal of a vote under each card (by action id), kept across re-renders until the next try. */
const refusals = new Map<string, string>();

function el(tag: string, cls = '', value?: string): JQuery {
  const e = $(`<${tag}></${tag}>`);
  if (cls) e.addClass(cls);
  if (value !== undefined) e.text(value);
  return e;
}

/** `digits` base units as a decimal string at `scale` decimals (trailing zeros dropped), or undefined when not an integer. */
function decimalOf(digits: unknown, scale: number): string | undefined {
  const s = typeof digits === 'number' && Number.isSafeInteger(digits) ? String(digits) : typeof digits === 'string' ? digits : '';
  if (!/^\d+$/.test(s)) return undefined;
  const padded = s.padStart(scale + 1, '0');
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, '');
  const fraction = padded.slice(padded.length - scale).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** The scale (decimals) at which `base` base units read as `decimal`, when there is exactly one. */
function scaleOf(base: unknown, decimal: string | undefined): number | undefined {
  if (decimal === undefined || !/^\d+(\.\d+)?$/.test(decimal)) return undefined;
  const want = decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal;
  if (/^0*(\.0*)?$/.test(want)) return undefined;
  for (let s = 0; s <= 30; s++) if (decimalOf(base, s) === want) return s;
  return undefined;
}

/** An amount of the action's details shown: decimal when the scale is known, else base units labelled as such. */
function detailAmount(value: unknown, scale: number | undefined, asset: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const dec = scale === undefined ? undefined : decimalOf(value, scale);
  return dec !== undefined ? t('custody-review.tab.amount', { amount: dec, asset }) : t('custody-review.tab.baseUnits', { amount: String(value), asset });
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** What the card shows of the money ({@link Facts} but `asset`): each amount as a ready text ("0.9 BTC-TESTNET" or "... base units of ..."). */
type Shown = Omit<Facts, 'asset'>;

/** The shown facts of a review: its `facts`, else read from its `details` (runtimes without `facts`). */
function shown(r: { facts?: Facts; details?: Record<string, unknown>; amount?: { asset: string; decimal: string }; type?: string; initiatedBy?: string; initiatorName?: string }): Shown {
  const f = r.facts;
  if (f) {
    const asset = f.asset ?? '';
    const amt = (v?: string) => (v !== undefined && v !== '' ? t('custody-review.tab.amount', { amount: v, asset }) : undefined);
    return { net: amt(f.net), fee: amt(f.fee), gross: amt(f.gross), destination: f.destination ?? { kind: 'unknown', value: '' }, source: f.source ?? {}, reference: f.reference, benefitOf: f.benefitOf, accountNo: f.accountNo, initiator: f.initiator };
  }
  const d = r.details ?? {};
  const asset = r.amount?.asset ?? str(d.asset) ?? '';
  const scale = scaleOf(d.netAmount ?? d.amount, r.amount?.decimal);
  const txType = str(d.txType) ?? '';
  const kind: Destination['kind'] = txType === 'withdrawal' || r.type === 'ApproveWithdraw' ? 'address' : txType === 'transfer' || txType === 'swapTake' || r.type === 'ApproveTransfer' || r.type === 'ApproveSwapTake' ? 'wallet' : 'unknown';
  const initiator = [str(r.initiatorName ?? d.initiatorName), str(r.initiatedBy ?? d.initiatedBy)].filter(Boolean);
  return {
    net: r.amount ? t('custody-review.tab.amount', { amount: r.amount.decimal, asset }) : detailAmount(d.netAmount, scale, asset),
    fee: detailAmount(d.fees, scale, asset),
    gross: detailAmount(d.amount, scale, asset),
    destination: { kind, value: str(d.recipientAddress ?? d.recipientID) ?? '', name: str(d.recipientAddressName ?? d.recipientName) },
    source: { fundID: str(d.fundID) },
    reference: str(d.reference),
    benefitOf: str(d.benefitOf),
    accountNo: str(d.accountNo),
    initiator: initiator.length === 2 && initiator[0] !== initiator[1] ? `${initiator[0]} (${initiator[1]})` : initiator[0],
  };
}

/** The destination as one line: "Acme Ltd (wallet w-1)", "wallet w-1", or "unknown". */
function destinationText(d: Destination): string {
  if (!d.value) return d.name || t('custody-review.tab.unknown');
  const where = destinationWhere(d);
  return d.name ? t('custody-review.tab.destination.named', { name: d.name, where }) : where;
}

/** "wallet w-1" / "address tb1q..." / the bare value. */
function destinationWhere(d: Destination): string {
  if (d.kind === 'wallet') return t('custody-review.tab.destination.wallet', { value: d.value });
  if (d.kind === 'address') return t('custody-review.tab.destination.address', { value: d.value });
  return t('custody-review.tab.destination.unknown', { value: d.value });
}

function sourceText(s: Shown['source']): string | undefined {
  const parts = [s.fundID ? t('custody-review.tab.source.fund', { fund: s.fundID }) : '', s.walletID ? t('custody-review.tab.source.wallet', { wallet: s.walletID }) : ''].filter(Boolean);
  return parts.length ? parts.join(', ') : undefined;
}

/** "in 42 min" / "2 min ago" for an epoch-ms time. */
function relative(ms: number): string {
  const diff = ms - Date.now();
  const abs = Math.abs(diff) / 1000;
  const span = abs < 60 ? t('custody-review.tab.span.s', { n: Math.floor(abs) }) : abs < 3600 ? t('custody-review.tab.span.min', { n: Math.floor(abs / 60) }) : abs < 172800 ? t('custody-review.tab.span.h', { n: Math.floor(abs / 3600) }) : t('custody-review.tab.span.d', { n: Math.floor(abs / 86400) });
  return diff >= 0 ? t('custody-review.tab.relative.future', { span }) : t('custody-review.tab.relative.past', { span });
}

/** A time as "local time (relative)", kept current by {@link retime}; its ISO form as the tooltip. */
function when(ms: number, cls = ''): JQuery {
  const e = el('span', `custody-review-when ${cls}`.trim()).attr('data-at', String(ms)).attr('title', new Date(ms).toISOString());
  e.text(t('custody-review.tab.when', { time: new Date(ms).toLocaleString(), relative: relative(ms) }));
  return e;
}

/** Update the relative part of every shown time (no request: only the clock moves). */
function retime(): void {
  content.find('.custody-review-when').each((_, node) => {
    const e = $(node);
    const ms = Number(e.attr('data-at'));
    e.text(t('custody-review.tab.when', { time: new Date(ms).toLocaleString(), relative: relative(ms) }));
    if (e.hasClass('custody-review-deadline')) e.toggleClass('custody-review-late', ms - Date.now() < 5 * 60000);
  });
}

function kindText(type: string | undefined): string {
  switch (type) {
    case 'ApproveTransfer':
      return t('custody-review.tab.kind.transfer');
    case 'ApproveWithdraw':
      return t('custody-review.tab.kind.withdrawal');
    case 'ApproveSwap':
      return t('custody-review.tab.kind.swap');
    case 'ApproveSwapTake':
      return t('custody-review.tab.kind.swapTake');
    case 'ApproveNewWalletConnect':
      return t('custody-review.tab.kind.walletConnect');
    default:
      return type || t('custody-review.tab.kind.action');
  }
}

function nodeLink(id: string | undefined, name: string | undefined): JQuery {
  const label = name || id || '';
  if (!id || !editor.view?.reveal) return el('span', '', label);
  return $('<a href="#"></a>').text(label).on('click', (e) => {
    e.preventDefault();
    editor.view?.reveal?.(id);
  });
}

/** The facts as a list of (label, value, class) rows; rows without a value are left out. */
function facts(rows: Array<[string, string | JQuery | undefined, string?]>): JQuery {
  const dl = el('dl', 'custody-review-facts');
  for (const [key, value, cls] of rows) {
    if (value === undefined || value === '') continue;
    const dd = el('dd', cls ?? '');
    if (typeof value === 'string') dd.text(value);
    else dd.append(value);
    dl.append(el('dt', '', key), dd);
  }
  return dl;
}

/** The confirmation of a vote: what moves where, asked in a modal notification; `send` runs on confirm only. */
function confirmVote(r: ReviewItem, s: Shown, decision: 'approve' | 'reject', reason: string, send: () => void): void {
  const net = s.net ?? t('custody-review.tab.unknownAmount');
  const body = el('div', 'custody-review-confirm-text');
  const destination = destinationText(s.destination);
  body.append(el('p', 'custody-review-confirm-main', decision === 'approve' ? t('custody-review.tab.confirm.approve', { net, destination }) : t('custody-review.tab.confirm.reject', { net, destination })));
  body.append(el('p', '', t('custody-review.tab.confirm.amounts', { net, gross: s.gross ?? t('custody-review.tab.unknownAmount'), fee: s.fee ?? t('custody-review.tab.unknownAmount') })));
  const from = sourceText(s.source);
  if (from) body.append(el('p', '', t('custody-review.tab.confirm.source', { source: from })));
  if (decision === 'reject') body.append(el('p', '', t('custody-review.tab.confirm.reason', { reason })));
  body.append(el('p', 'custody-review-meta', t('custody-review.tab.confirm.context', { action: r.action_id, node: r.nodeName || r.node || '', approvals: r.approvals, required: r.required })));
  const n = editor.notify(body, {
    modal: true,
    fixed: true,
    type: 'warning',
    buttons: [
      { text: t('custody-review.tab.cancel'), class: 'custody-review-cancel', click: () => n.close() },
      {
        text: decision === 'approve' ? t('custody-review.tab.approve') : t('custody-review.tab.reject'),
        class: `primary custody-review-confirm custody-review-confirm-${decision}`,
        click: () => {
          n.close();
          send();
        },
      },
    ],
  });
}

/** Send the vote; the result (or the API's error text) as a notification and under the card. */
function vote(r: ReviewItem, s: Shown, decision: 'approve' | 'reject', reason: string): void {
  refusals.delete(r.action_id);
  $.ajax({ url: `custody/reviews/${encodeURIComponent(r.action_id)}`, method: 'POST', contentType: 'application/json', dataType: 'json', data: JSON.stringify({ decision, ...(reason ? { reason } : {}), via: 'editor' }) })
    .done((after: Partial<ReviewItem>) => {
      drafts.delete(r.action_id);
      refusals.delete(r.action_id);
      const approvals = typeof after?.approvals === 'number' ? after.approvals : r.approvals + (decision === 'approve' ? 1 : 0);
      const required = typeof after?.required === 'number' ? after.required : r.required;
      const net = s.net ?? t('custody-review.tab.unknownAmount');
      const destination = destinationText(s.destination);
      let msg = decision === 'approve' ? t('custody-review.tab.result.approved', { net, destination, approvals, required }) : t('custody-review.tab.result.rejected', { net, destination });
      if (after?.state === 'calling') msg = t('custody-review.tab.result.calling', { result: msg });
      editor.notify(el('p', 'custody-review-result', msg), { type: 'success', timeout: 8000 });
      refresh();
    })
    .fail((xhr: JQuery.jqXHR) => {
      const message = (xhr.responseJSON && xhr.responseJSON.error) || `${xhr.status} ${xhr.statusText}`;
      refusals.set(r.action_id, message);
      editor.notify(el('p', 'custody-review-result', t('custody-review.tab.result.failed', { error: message })), { type: 'error', timeout: 10000 });
      refresh();
    });
}

function card(r: ReviewItem, canWrite: boolean): JQuery {
  const s = shown(r);
  const calling = r.state === 'calling';
  const box = el('div', 'custody-review-item').attr('data-action-id', r.action_id).attr('data-state', r.state ?? 'open');
  if (calling) box.addClass('custody-review-calling');
  const head = el('div', 'custody-review-head');
  head.append(el('span', 'custody-review-title', t('custody-review.tab.title', { amount: s.net ?? t('custody-review.tab.unknownAmount'), destination: destinationText(s.destination) })));
  head.append(el('span', 'custody-review-badge', kindText(r.type)));
  if (calling) head.append(el('span', 'custody-review-badge custody-review-badge-calling custody-review-state', t('custody-review.tab.badge.calling')));
  if (r.escalated) head.append(el('span', 'custody-review-badge custody-review-badge-escalated', t('custody-review.tab.badge.escalated')));
  box.append(head);

  const reasons = r.reasons.length ? el('ul', 'custody-review-reasons').append(r.reasons.map((x) => el('li', '', x))) : undefined;
  const deadline = r.expireTime > 0 ? when(r.expireTime * 1000, 'custody-review-deadline').toggleClass('custody-review-late', r.expireTime * 1000 - Date.now() < 5 * 60000) : t('custody-review.tab.noDeadline');
  const dest = el('span');
  dest.append(el('span', 'custody-review-to-name', s.destination.name ?? ''), s.destination.name ? ' ' : '');
  dest.append(el('span', 'custody-review-code custody-review-to-value', s.destination.value ? destinationWhere(s.destination) : t('custody-review.tab.unknown')));
  box.append(
    facts([
      [t('custody-review.tab.field.to'), dest, 'custody-review-to'],
      [t('custody-review.tab.field.from'), sourceText(s.source), 'custody-review-from'],
      [t('custody-review.tab.field.net'), s.net, 'custody-review-net'],
      [t('custody-review.tab.field.fee'), s.fee, 'custody-review-fee'],
      [t('custody-review.tab.field.gross'), s.gross, 'custody-review-gross'],
      [t('custody-review.tab.field.reference'), s.reference],
      [t('custody-review.tab.field.benefitOf'), s.benefitOf],
      [t('custody-review.tab.field.accountNo'), s.accountNo],
      [t('custody-review.tab.field.initiator'), s.initiator],
      [t('custody-review.tab.field.reasons'), reasons],
      [t('custody-review.tab.field.deadline'), deadline],
      [t('custody-review.tab.field.node'), nodeLink(r.node, r.nodeName), 'custody-review-node'],
      [t('custody-review.tab.field.actionId'), r.action_id, 'custody-review-code'],
      [t('custody-review.tab.field.approvals'), t('custody-review.tab.approvalsOf', { approvals: r.approvals, required: r.required }), 'custody-review-approvals'],
    ]),
  );
  if (r.votes.length) {
    const votes = el('ul', 'custody-review-votes');
    for (const v of r.votes) {
      const li = el('li', '', (v.decision === 'approve' ? t('custody-review.tab.vote.approve', { reviewer: v.reviewer, via: v.via }) : t('custody-review.tab.vote.reject', { reviewer: v.reviewer, via: v.via })) + ' ');
      const at = Date.parse(v.at);
      if (Number.isFinite(at)) li.append(when(at));
      if (v.reason) li.append(el('span', '', ` ${t('custody-review.tab.vote.reason', { reason: v.reason })}`));
      votes.append(li);
    }
    box.append(votes);
  }
  if (canWrite && !calling) {
    const reason = $('<input type="text" class="custody-review-reason">').attr('placeholder', t('custody-review.tab.reasonPlaceholder')).val(drafts.get(r.action_id) ?? '');
    reason.on('input', () => {
      drafts.set(r.action_id, String(reason.val() ?? ''));
      reason.removeClass('custody-review-missing');
    });
    const error = () => box.find('.custody-review-error');
    const approve = $('<button type="button" class="red-ui-button custody-review-approve"><i class="fa fa-check"></i> </button>');
    approve.append(document.createTextNode(t('custody-review.tab.approve')));
    approve.on('click', () => {
      refusals.delete(r.action_id);
      error().text('');
      const why = String(reason.val() ?? '').trim();
      confirmVote(r, s, 'approve', why, () => vote(r, s, 'approve', why));
    });
    const reject = $('<button type="button" class="red-ui-button custody-review-reject"><i class="fa fa-times"></i> </button>');
    reject.append(document.createTextNode(t('custody-review.tab.reject')));
    reject.on('click', () => {
      const why = String(reason.val() ?? '').trim();
      if (!why) {
        refusals.set(r.action_id, t('custody-review.tab.needsReason'));
        error().text(t('custody-review.tab.needsReason'));
        reason.addClass('custody-review-missing').trigger('focus');
        return;
      }
      refusals.delete(r.action_id);
      error().text('');
      confirmVote(r, s, 'reject', why, () => vote(r, s, 'reject', why));
    });
    box.append(reason, el('div', 'custody-review-actions').append(approve, reject));
  }
  box.append(el('div', 'custody-review-error', refusals.get(r.action_id) ?? ''));
  return box;
}

function stateText(state: RecentItem['state']): string {
  switch (state) {
    case 'approved':
      return t('custody-review.tab.state.approved');
    case 'rejected':
      return t('custody-review.tab.state.rejected');
    case 'expired':
      return t('custody-review.tab.state.expired');
    case 'failed':
      return t('custody-review.tab.state.failed');
    case 'decidedElsewhere':
      return t('custody-review.tab.state.decidedElsewhere');
    default:
      return String(state);
  }
}

/** One decided review of `recent`: its state, what moved where, who decided, when, and in which node. */
function recentItem(d: RecentItem): JQuery {
  const s = shown({ facts: d.facts });
  const li = el('li', 'custody-review-recent-item').attr('data-action-id', d.action_id).attr('data-state', d.state);
  const head = el('div');
  head.append(el('span', `custody-review-badge custody-review-badge-${d.state}`, stateText(d.state)), ' ');
  head.append(el('span', '', t('custody-review.tab.title', { amount: s.net ?? t('custody-review.tab.unknownAmount'), destination: destinationText(s.destination) })));
  li.append(head);
  const meta = el('div', 'custody-review-meta');
  if (d.decidedBy.length) meta.append(el('span', '', t('custody-review.tab.recentBy', { who: d.decidedBy.join(', ') })), ' ');
  const at = Date.parse(d.at);
  if (Number.isFinite(at)) meta.append(when(at), ' ');
  meta.append(el('span', '', '· '), nodeLink(d.node, d.nodeName));
  if (d.why) meta.append(el('div', '', d.why));
  return li.append(meta);
}

function render(list: ReviewList): void {
  const canWrite = RED.user.hasPermission('custody.review.write');
  // Keep the reviewer's place: the reason field being typed into keeps its focus and caret.
  const focused = document.activeElement as HTMLInputElement | null;
  const focusId = focused && $(focused).hasClass('custody-review-reason') ? $(focused).closest('.custody-review-item').attr('data-action-id') : undefined;
  const caret = focusId ? focused?.selectionStart : null;
  content.empty();
  content.append(el('div', 'custody-review-user', list.adminAuth ? t('custody-review.tab.votingAs', { user: list.user }) : t('custody-review.tab.anonymous')));
  if (!canWrite) content.append(el('div', 'custody-review-readonly', t('custody-review.tab.readOnly')));
  content.append(el('h4', '', t('custody-review.tab.openTitle', { count: list.reviews.length })));
  if (list.reviews.length === 0) content.append(el('div', 'custody-review-empty', t('custody-review.tab.none')));
  const open = new Set<string>();
  for (const r of list.reviews) {
    open.add(r.action_id);
    content.append(card(r, canWrite));
  }
  for (const id of [...drafts.keys()]) if (!open.has(id)) drafts.delete(id);
  for (const id of [...refusals.keys()]) if (!open.has(id)) refusals.delete(id);
  if (list.recent) {
    content.append(el('h4', '', t('custody-review.tab.recentTitle')));
    if (list.recent.length === 0) content.append(el('div', 'custody-review-empty', t('custody-review.tab.recentNone')));
    else content.append(el('ul', 'custody-review-recent').append(list.recent.map(recentItem)));
  }
  if (focusId) {
    const input = content.find(`.custody-review-item[data-action-id="${CSS.escape(focusId)}"] .custody-review-reason`)[0] as HTMLInputElement | undefined;
    if (input) {
      input.focus();
      if (caret !== null && caret !== undefined) input.setSelectionRange(caret, caret);
    }
  }
}

let reading = false;
let readAgain = false;

/** Read `GET custody/reviews` and render it; a change announced meanwhile reads once more after. */
function refresh(): void {
  if (reading) {
    readAgain = true;
    return;
  }
  reading = true;
  $.ajax({ url: 'custody/reviews', dataType: 'json', cache: false })
    .done((list: ReviewList) => render(list))
    .fail((xhr: JQuery.jqXHR) => {
      content.empty().append(el('div', 'custody-review-denied', xhr.status === 403 ? t('custody-review.tab.denied') : t('custody-review.tab.unavailable', { status: `${xhr.status} ${xhr.statusText}` })));
    })
    .always(() => {
      reading = false;
      if (readAgain) {
        readAgain = false;
        refresh();
      }
    });
}

if (!document.getElementById('custody-review-style')) $('<style id="custody-review-style"></style>').text(STYLE).appendTo('head');
RED.sidebar.addTab({ id: 'custody-review', label: t('custody-review.tab.label'), name: t('custody-review.tab.name'), iconClass: 'fa fa-gavel', content, enableOnEdit: true, onchange: refresh });
RED.comms.subscribe('custody/reviews', () => refresh());
// Only the relative times ("in 42 min") move with the clock: re-label them, no request.
setInterval(() => {
  if (content.is(':visible')) retime();
}, 30000);
refresh();
