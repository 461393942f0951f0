/**
 * Test isolation for durable state the nodes keep outside a flow: each test process gets its own
 * submission journal folder (`CUSTODYFLOW_JOURNAL_DIR`, see custody-config), unless one is set,
 * removed when the process exits. Without it, node-red-node-test-helper (which has no user
 * directory) would share `<os tmp>/custodyflow/journal` between runs, and a key reused by a later
 * run would be refused as a journaled payment, as it should be for a user.
 * Imported for its effect by the node test files and by .mocharc.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

if (!process.env.CUSTODYFLOW_JOURNAL_DIR) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cf-test-journal-'));
  process.env.CUSTODYFLOW_JOURNAL_DIR = dir;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}
