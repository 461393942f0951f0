/**
 * lib FailureReports (lib/feeds/feed-health.ts) and the failure causes of lib/client/failure.ts:
 * when a failing connection is worth a log line, and what a refused or failed feed connection is.
 * The clock is passed in: the quiet period is checked without waiting.
 */
import assert from 'node:assert/strict';
import { ApiError, ConfigError, connectionFailureOf, failureCauseOf } from '../../lib';
import { FailureReports, FeedConnectionError } from '../../lib/feeds';

const auth = connectionFailureOf(FeedConnectionError.refused(401, { code: 401, msg: 'errPartnerAuth', detail: { reason: 'api key' } }));
const refused = connectionFailureOf(FeedConnectionError.failed(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })));

describe('feed health: failure causes and FailureReports', () => {
  it('tells the causes of feed connections and calls apart', () => {
    assert.deepEqual(
      { cause: auth.cause, statusCode: auth.statusCode, code: auth.code, msg: auth.msg, reason: auth.reason },
      { cause: 'badApiKey', statusCode: 401, code: 401, msg: 'errPartnerAuth', reason: 'api key' },
    );
    assert.equal(connectionFailureOf(FeedConnectionError.refused(401, { code: 1020, msg: 'errPartnerAuth', detail: { reason: 'signature' } })).cause, 'badSignature');
    assert.equal(refused.cause, 'unreachable');
    assert.equal(refused.key, 'unreachable');
    assert.equal(connectionFailureOf(FeedConnectionError.failed(new Error('Opening handshake has timed out'))).cause, 'timeout');
    assert.equal(connectionFailureOf(FeedConnectionError.failed(new Error('Opening handshake has timed out'))).key, 'unreachable', 'a time-out is the same "cannot reach" as a refusal');
    assert.equal(failureCauseOf(FeedConnectionError.failed(Object.assign(new Error('connect ECONNRESET 127.0.0.1:9'), { code: 'ECONNRESET' }))), 'unreachable', 'a reset while connecting');
    assert.equal(failureCauseOf(FeedConnectionError.failed(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))), 'network', 'a reset mid-handshake');
    assert.equal(failureCauseOf(FeedConnectionError.failed(Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))), 'tls');
    assert.equal(failureCauseOf(FeedConnectionError.refused(404, undefined)), 'http');
    assert.equal(FeedConnectionError.refused(404, undefined).message, 'feed handshake refused: HTTP 404 Not Found');
    assert.equal(failureCauseOf(new ConfigError('apiKey: set the API key')), 'config');
    assert.equal(failureCauseOf(new ApiError(401, { code: 401, msg: 'Unauthorized', detail: {} }), 'v2'), 'badToken');
    assert.notEqual(auth.key, refused.key);
  });

  it('logs a cause once however often it repeats, a new cause once, a recovery once; a flapping cause at most once per quiet period', () => {
    let now = 0;
    const reports = new FailureReports({ quietMs: 60000, now: () => now });
    assert.deepEqual(reports.failed(auth), { changed: true, log: true });
    for (let i = 0; i < 100; i++) {
      now += 5000;
      assert.deepEqual(reports.failed(auth), { changed: false, log: false }, `retry ${i}`);
    }
    assert.deepEqual(reports.failed(refused), { changed: true, log: true }, 'a new cause');
    assert.equal(reports.current, refused);
    assert.deepEqual(reports.recovered(), { changed: true, log: true }, 'the recovery of a logged outage');
    assert.deepEqual(reports.recovered(), { changed: false, log: false }, 'nothing to recover from');
    // Flapping: the same cause again within the quiet period is shown, not logged, nor is its recovery.
    now += 1000;
    assert.deepEqual(reports.failed(refused), { changed: true, log: false });
    assert.deepEqual(reports.recovered(), { changed: true, log: false });
    now += 60000;
    assert.deepEqual(reports.failed(refused), { changed: true, log: true }, 'logged again once the quiet period has passed');
  });
});
