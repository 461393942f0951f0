/**
 * The public entry of the tracking service (`@custodyflow/node-red-custody/tracking`; nodes import
 * it as `lib/tracking`): following a transfer, withdrawal, swap or sweep to its final state (spec
 * section 3; the states are lib/api/states.ts) and remembering what is followed across restarts.
 * Loaded only by what tracks (custody-track's constructor), never by the package root.
 *
 * - tracker.ts: {@link Tracker}, one timer reading each tracked transaction with back-off until it
 *   is final, times out or fails for good ({@link isFinalFailure}).
 * - track-store.ts: the durable record of each msg followed ({@link TrackRecord}), in a file
 *   ({@link FileTrackStore}) or in Redis when the connection coordinates ({@link RedisTrackStore});
 *   {@link openTrackStore} picks one; {@link storableMsg} is the part of a msg a record keeps and
 *   {@link trackRecordId} its id (docs/nodes.md "custody-track", "Across restarts").
 * - track-service.ts: {@link TrackService}, the tracking of one custody-track node (record, follow,
 *   resume after a restart, "mark reported, then send" once, the feeds' wake-ups), with plain
 *   callbacks and no Node-RED; {@link trackFolder} is where its files live.
 */
export { Tracker, isFinalFailure, type TrackerOptions, type TrackerCallbacks, type TrackerTimers, type TrackTarget, type Tracked, type TrackRead, type TrackResume } from './tracker';
export {
  openTrackStore,
  trackStoreFile,
  trackRecordId,
  storableMsg,
  FileTrackStore,
  RedisTrackStore,
  DEFAULT_TRACK_KEEP_REPORTED_MS,
  DEFAULT_TRACK_MSG_MAX_BYTES,
  TRACK_CONNECT_WAIT_MS,
  TRACK_PRUNE_EVERY_MS,
  type TrackRetained,
  type TrackStore,
  type TrackStoreOptions,
  type TrackRecord,
  type TrackOutcome,
  type StorableMsg,
  type TrackCoordination,
  type TrackStoreCoordinator,
} from './track-store';
export {
  TrackService,
  trackFolder,
  UNKNOWN_EXPIRY_MS,
  REPORT_RETRY_MS,
  type TrackServiceOptions,
  type TrackInfo,
  type TrackMessage,
  type TrackSend,
  type TrackDone,
  type TrackEnded,
  type TrackStatus,
  type TrackProblem,
  type TrackTexts,
} from './track-service';
