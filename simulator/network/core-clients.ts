/**
 * Core clients (spec section 2 "Core client", section 4 "Core clients"; OpenAPI `/coreclient`).
 */
import type { Engine } from '../engine';
import type { CoreClient } from '../../lib/api/v1/core-client';
import { badRequest, forbidden, notFound } from '../errors';
import { newId } from '../ids';
import type { CoreClientRecord } from '../model';
import { getCompany } from './companies';

/** Build the view; `wsBase` is e.g. `ws://127.0.0.1:8780/api/v1/p` (from the request's Host header). */
export function coreClientView(c: CoreClientRecord, wsBase: string): CoreClient {
  return { id: c.id, name: c.name, feed: `${wsBase}/coreclient/${c.id}/feed`, timestamp: c.timestamp };
}

/**
 * POST /coreclient `{name}`.
 * @param id a fixed id (the demo dataset's); a new random id when omitted.
 */
export function createCoreClient(eng: Engine, name: string, id = newId()): CoreClientRecord {
  const c: CoreClientRecord = { id, name, timestamp: eng.now() };
  if (eng.account) c.account = eng.account;
  eng.state.coreClients[c.id] = c;
  eng.changed();
  return c;
}

/** @throws 404 unknown core client; 403 a core client of another API account */
export function getCoreClient(eng: Engine, clientId: string): CoreClientRecord {
  const c = eng.state.coreClients[clientId];
  if (!c) throw notFound(`client_id: no core client ${clientId}`);
  if (c.account !== eng.account) throw forbidden(`client_id: core client ${clientId} belongs to another API account`);
  return c;
}

/**
 * GET /coreclient?company_id=: the core clients that are trusted parties of the company.
 * @throws 400 company_id missing; 404 unknown company.
 */
export function listCoreClients(eng: Engine, companyId: unknown): CoreClientRecord[] {
  if (typeof companyId !== 'string' || companyId === '') throw badRequest('company_id: query parameter is required');
  const company = getCompany(eng, companyId);
  return Object.values(company.trusted)
    .filter((t) => t.type === 'core-client' && eng.state.coreClients[t.trusted_entity_id])
    .map((t) => eng.state.coreClients[t.trusted_entity_id]);
}
