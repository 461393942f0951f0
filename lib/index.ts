/**
 * CustodyFlow lib: a signed client of the Custody Partner API with no Node-RED dependency.
 * See DESIGN.md "lib" and the spec `custody-partner-api-v1.md`.
 */
export * from './errors';
export * from './signing';
export * from './environments';
export * from './client';
export * from './operation';
export * from './amounts';
export * from './feed';
export * from './hub-feed';
export * from './wallets-feed';
export * from './tracker';
export * from './v1';
export * from './v2';
export * from './approver';
export * from './submission';
export * from './coordination';
export * from './durable/record-file';
export * from './asset-list';
export * from './api/operations';
export * from './wire';
export * from './response-check';
export * from './track-store';
