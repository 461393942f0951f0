/**
 * The "Custody review" sidebar tab of `custody-review` (docs/nodes.md "custody-review"): the open
 * reviews of every review node, read from the admin API `GET custody/reviews` (scope
 * `custody.review.read`) and read again whenever the runtime publishes on the `RED.comms` topic
 * `custody/reviews` (and every 15 s while the tab is shown: with Redis, votes on another instance); each with the action's details in decimal units, why it was held, the
 * initiator, the deadline and the votes, and Approve / Reject (with a reason) buttons, shown only
 * to a user holding `custody.review.write`. Votes go to `POST custody/reviews/{action_id}`.
 */

/** A vote as the API lists it. */
interface VoteView {
  reviewer: string;
  decision: 'approve' | 'reject';
  reason?: string;
  at: string;
  via: string;
}

/** A review as `GET custody/reviews` lists it. */
interface ReviewItem {
  action_id: string;
  client_id: string;
  type?: string;
  amount?: { asset: string; decimal: string };
  details: Record<string, unknown>;
  reasons: string[];
  initiatedBy?: string;
  initiatorName?: string;
  expireTime: number;
  required: number;
  approvals: number;
  votes: VoteView[];
  nodeName: string;
}

/** The answer of `GET custody/reviews`. */
interface ReviewList {
  user: string;
  adminAuth: boolean;
  reviews: ReviewItem[];
}

/** The tab's content. */
const content = $('<div class="custody-review-tab" style="padding: 8px; overflow-y: auto; height: 100%; box-sizing: border-box;"></div>');

function text(tag: string, value: string, cls = ''): JQuery {
  return $(`<${tag}${cls ? ` class="${cls}"` : ''}></${tag}>`).text(value);
}

function deadline(expireTime: number): string {
  return expireTime > 0 ? new Date(expireTime * 1000).toISOString().replace('.000Z', 'Z') : 'none';
}

function vote(actionId: string, decision: 'approve' | 'reject', reason: string): void {
  $.ajax({ url: `custody/reviews/${encodeURIComponent(actionId)}`, method: 'POST', contentType: 'application/json', data: JSON.stringify({ decision, reason, via: 'editor' }) })
    .done(() => refresh())
    .fail((xhr: JQuery.jqXHR) => {
      const message = (xhr.responseJSON && xhr.responseJSON.error) || `${xhr.status} ${xhr.statusText}`;
      content.find(`[data-action-id="${actionId}"] .custody-review-error`).text(message);
      RED.notify(`Custody review: ${message}`, 'error');
    });
}

function card(r: ReviewItem, canWrite: boolean): JQuery {
  const box = $('<div class="custody-review-item" style="border: 1px solid #ccc; border-radius: 4px; padding: 6px; margin-bottom: 8px;"></div>').attr('data-action-id', r.action_id);
  box.append(text('div', `${r.type ?? 'action'} ${r.amount ? `${r.amount.decimal} ${r.amount.asset}` : ''}`, 'custody-review-title').css('font-weight', 'bold'));
  const d = r.details;
  const rows: Array<[string, unknown]> = [
    ['action', r.action_id],
    ['to', d.recipientAddressName || d.recipientAddress],
    ['reference', d.reference],
    ['initiator', [r.initiatorName, r.initiatedBy].filter(Boolean).join(' / ')],
    ['deadline', deadline(r.expireTime)],
    ['held because', r.reasons.join('; ')],
    ['approvals', `${r.approvals} of ${r.required}`],
  ];
  for (const [k, v] of rows) if (v !== undefined && v !== '') box.append(text('div', `${k}: ${String(v)}`, 'custody-review-row'));
  const votes = $('<ul class="custody-review-votes" style="margin: 4px 0 4px 16px;"></ul>');
  for (const v of r.votes) votes.append(text('li', `${v.reviewer} ${v.decision === 'approve' ? 'approved' : 'rejected'} (${v.via}, ${v.at})${v.reason ? `: ${v.reason}` : ''}`));
  box.append(votes);
  if (canWrite) {
    const reason = $('<input type="text" class="custody-review-reason" placeholder="reason (required to reject)" style="width: 100%; margin-bottom: 4px;">');
    const approve = $('<button type="button" class="red-ui-button custody-review-approve">Approve</button>').on('click', () => vote(r.action_id, 'approve', String(reason.val() ?? '')));
    const reject = $('<button type="button" class="red-ui-button custody-review-reject" style="margin-left: 4px;">Reject</button>').on('click', () => vote(r.action_id, 'reject', String(reason.val() ?? '')));
    box.append(reason, $('<div></div>').append(approve, reject));
  }
  box.append(text('div', '', 'custody-review-error').css('color', '#c00'));
  return box;
}

function render(list: ReviewList): void {
  const canWrite = RED.user.hasPermission('custody.review.write');
  content.empty();
  content.append(text('div', list.adminAuth ? `Voting as ${list.user}` : 'No adminAuth: votes are recorded as "anonymous"', 'custody-review-user').css('margin-bottom', '6px'));
  if (!canWrite) content.append(text('div', 'You may see the reviews but not vote (no custody.review.write scope).', 'custody-review-readonly'));
  if (list.reviews.length === 0) content.append(text('div', 'No open reviews.', 'custody-review-empty'));
  for (const r of list.reviews) content.append(card(r, canWrite));
}

function refresh(): void {
  $.getJSON('custody/reviews')
    .done((list: ReviewList) => render(list))
    .fail((xhr: JQuery.jqXHR) => {
      content.empty().append(text('div', xhr.status === 403 ? 'You have no custody.review.read scope.' : `Reviews unavailable: ${xhr.status} ${xhr.statusText}`, 'custody-review-denied'));
    });
}

RED.sidebar.addTab({ id: 'custody-review', label: 'Custody review', name: 'Custody review', iconClass: 'fa fa-gavel', content, enableOnEdit: true, onchange: refresh });
RED.comms.subscribe('custody/reviews', () => refresh());
// With Redis another instance may change the queue without this runtime publishing it: read it again while shown.
setInterval(() => {
  if (content.is(':visible')) refresh();
}, 15000);
refresh();
