/**
 * The public entry of the coordination service (`@custodyflow/node-red-custody/coordination`;
 * nodes import it as `lib/coordination`): several instances sharing one Redis (docs/scale-out.md).
 * The {@link Coordinator} holds the connection in its three modes (standalone, Sentinel, Cluster),
 * the claims, leases, the epoch and the failover detection; {@link SharedSubmissionJournal} shares
 * the exactly-once payment journal through it. Loaded only by a connection whose coordination is
 * `redis` (and by the dialog's "Test Redis"), never by the package root; ioredis is loaded only when
 * a coordinator connects (redis-connection.ts).
 */
export {
  Coordinator,
  CoordinationUnavailableError,
  DEFAULT_LEASE_MS,
  DEFAULT_KEY_PREFIX,
  DEFAULT_MASTER_NAME,
  checkRedisUrl,
  parseRedisAddresses,
  clusterKeyPrefix,
  type CoordinatorOptions,
  type CoordinationState,
  type FailoverInfo,
  type Claim,
  type ClaimResult,
  type RedisMode,
  type RedisAddress,
} from './coordinator';
export { SharedSubmissionJournal, SHARED_JOURNAL_LOCK_LEASE_MS, type SharedJournalOptions } from './shared-journal';
