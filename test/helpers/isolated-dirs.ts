/**
 * Test isolation for durable state the nodes keep outside a flow: each test process gets its own
 * submission journal folder (`CUSTODYFLOW_JOURNAL_DIR`, see custody-config) and core client feed
 * memory folder (`CUSTODYFLOW_FEED_DIR`, see custody-coreclient-feed) and custody-track record folder
 * (`CUSTODYFLOW_TRACK_DIR`, see custody-track) and custody-review queue folder (`CUSTODYFLOW_REVIEW_DIR`), unless set, removed when
 * the process exits. Without them, node-red-node-test-helper (which has no user directory) would
 * share `<os tmp>/custodyflow/journal` between runs, and a key reused by a later run would be
 * refused as a journaled payment, as it should be for a user; and every run's feed nodes would
 * write the same `<os tmp>/custodyflow/feed` files.
 * Imported for its effect by the node test files and by .mocharc.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

for (const [name, prefix] of [
  ['CUSTODYFLOW_JOURNAL_DIR', 'cf-test-journal-'],
  ['CUSTODYFLOW_FEED_DIR', 'cf-test-feed-'],
  ['CUSTODYFLOW_TRACK_DIR', 'cf-test-track-'],
  ['CUSTODYFLOW_REVIEW_DIR', 'cf-test-review-'],
] as const) {
  if (process.env[name]) continue;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.env[name] = dir;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}
