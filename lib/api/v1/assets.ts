/**
 * Reference data and fees (spec section 4 "Reference data and fees"; OpenAPI `/assets`, `/fees`).
 */
import { W, type Wire } from '../wire';
import { objectSchema, listSchema, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S } from '../spec';

/**
 * An asset (spec section 2 "Asset"): `code`, `name`, `unitCode`, `scale` (base units per whole
 * asset: BTC 1e8, ETH 1e9; GET /assets is authoritative), `enabled`, `testAsset`. All six are
 * required (the spec's table; the OpenAPI Assets schema lacks `testAsset`: the spec rules).
 */
export const assetSchema = objectSchema(['code', 'name', 'unitCode', 'scale', 'enabled', 'testAsset'], {
  code: W.id,
  name: W.text,
  unitCode: W.text,
  // "units per whole asset": a whole number of base units, at least 1.
  scale: { type: 'integer', minimum: 1 },
  enabled: W.boolean,
  testAsset: W.boolean,
});

/** An asset ({@link assetSchema}); `scale` is base units per whole asset (BTC 1e8, ETH 1e9). */
export type Asset = Wire<typeof assetSchema>;

/**
 * GET /assets answer: `{assets: Asset[]}` (spec section 4). The OpenAPI Assets schema types
 * `assets` as one object; the spec says `assets[]` of Asset and rules.
 */
export const assetListSchema = listSchema('assets', assetSchema);

/** GET /assets answer ({@link assetListSchema}). */
export type AssetList = Wire<typeof assetListSchema>;

/**
 * POST /fees body (spec section 2 "Fee request and response"; OpenAPI FeesRequest): `type` the
 * transaction type (`transferOut`; the OpenAPI adds `withdraw`, `swap`), `asset` code, `amount`
 * in base units (a positive integer: a quote for 0 base units quotes nothing). All required.
 */
export const feeRequestSchema = objectSchema(['type', 'asset', 'amount'], { type: { type: 'string', enum: ['transferOut', 'withdraw', 'swap'] }, asset: S.assetCode, amount: S.positiveBaseUnits });

/** POST /fees body ({@link feeRequestSchema}). */
export type FeeRequest = Wire<typeof feeRequestSchema>;

/**
 * POST /fees answer (spec section 2 "Fee request and response"; OpenAPI FeesResponse): `netAmount`,
 * `amountToSend`, `fees`, all required, base units (integers >= 0; `amountToSend = netAmount + fees`).
 */
export const feeQuoteSchema = objectSchema(['netAmount', 'amountToSend', 'fees'], { netAmount: W.unsignedBaseUnits, amountToSend: W.unsignedBaseUnits, fees: W.unsignedBaseUnits });

/** POST /fees answer ({@link feeQuoteSchema}), base units: `amountToSend = netAmount + fees`. */
export type FeeQuote = Wire<typeof feeQuoteSchema>;

/** Operation declarations of this group, by id. */
export const assetOperations = {
  assets: readOperation('/assets', 'spec section 4, GET /assets', assetListSchema),
  fee: operation('POST', '/fees', 'spec section 4, POST /fees; OpenAPI FeesRequest', answers(feeQuoteSchema), {
    idempotent: true,
    amounts: [{ amount: 'amount', asset: 'asset' }],
    body: feeRequestSchema,
  }),
} satisfies Record<string, OperationSpec>;
