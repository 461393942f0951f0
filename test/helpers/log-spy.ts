/**
 * The runtime log of node-red-node-test-helper (its sinon spy on the Node-RED log) checked for
 * what must never be logged.
 */
import assert from 'node:assert/strict';
import helper from 'node-red-node-test-helper';

/**
 * Register a `logs` suite in the current describe (register it last: it reads the log of every
 * test above) with one test asserting that the helper's log spy saw log lines and that their
 * JSON text passes `assertClean` (called as `assertClean(text, 'the log')`, throwing on a hit).
 * @param what what must not be logged, for the test's title (e.g. `a secret`).
 */
export function describeCleanLog(what: string, assertClean: (text: string, where: string) => void): void {
  describe('logs', () => {
    it(`no log line of the runtime holds ${what} (after every test above)`, () => {
      const spy = (helper as unknown as { log(): { args: unknown[][] } }).log();
      assert.ok(spy.args.length > 0, 'the log spy saw the runtime log');
      assertClean(JSON.stringify(spy.args), 'the log');
    });
  });
}
