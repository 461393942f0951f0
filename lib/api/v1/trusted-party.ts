/**
 * The trusted network of a company (spec section 2 "Trusted party", section 4 "Trusted network";
 * OpenAPI `/company/{company_id}/trustedparty`).
 */
import { W, okBodySchema, type Wire } from '../wire';
import { objectSchema, arrayOf, answers, readOperation, operation } from '../schema-kit';
import { type OperationSpec, S, EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from '../spec';

/**
 * A trusted party entry (spec section 2 "Trusted party", section 4 GET .../trustedparty: "list of
 * entries (trusted_entity_id, name, type, address, internal, created)", all required). `type` is
 * `user` (spec) or `core-client` (the service's documentation examples: a core client added as a trusted party); `address` the
 * user's e-mail; `created` epoch seconds.
 */
export const trustedPartySchema = objectSchema(['trusted_entity_id', 'name', 'type', 'address', 'internal', 'created'], {
  trusted_entity_id: W.id,
  name: W.text,
  type: { type: 'string', enum: ['user', 'core-client'] },
  address: W.text,
  internal: W.boolean,
  created: W.epochSeconds,
});

/** A trusted party entry ({@link trustedPartySchema}). */
export type TrustedParty = Wire<typeof trustedPartySchema>;

/** GET /company/{company_id}/trustedparty answer: `company_id`, `total_count`, `list` (spec section 4). */
export const trustedPartyListSchema = objectSchema(['company_id', 'total_count', 'list'], { company_id: W.id, total_count: W.count, list: arrayOf(trustedPartySchema) });

/** GET /company/{company_id}/trustedparty answer ({@link trustedPartyListSchema}). */
export type TrustedPartyList = Wire<typeof trustedPartyListSchema>;

/** Plain success body `{code: 200, msg: "OK"}` (lib/api/wire.ts `okBodySchema`). */
export type { OkBody } from '../wire';

/** Operation declarations of this group, by id. */
export const trustedPartyOperations = {
  // Spec section 4: "HTTP 200 with code and msg".
  add: operation('POST', '/company/{company_id}/trustedparty', 'spec section 4, POST /company/{company_id}/trustedparty', answers(okBodySchema), {
    body: {
      type: 'object',
      required: ['address', 'type'],
      properties: { address: S.text(EMAIL_MAX_LENGTH), type: { type: 'string', enum: ['user', 'core-client'] }, name: S.optionalText(NAME_MAX_LENGTH) },
    },
  }),
  list: readOperation('/company/{company_id}/trustedparty', 'spec section 4, GET /company/{company_id}/trustedparty', trustedPartyListSchema),
  // Spec section 4: "HTTP 200 when removed": the spec overrides the OpenAPI's status 202; the
  // body, which the spec does not show, is the OpenAPI's OkResponse `{code, msg}`.
  remove: operation('DELETE', '/company/{company_id}/trustedparty/{trustedparty_id}', 'spec section 4, DELETE /company/{company_id}/trustedparty/{trustedparty_id}', answers(okBodySchema)),
} satisfies Record<string, OperationSpec>;
