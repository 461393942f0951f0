/**
 * HTTP fault injection for the signed API (simulator/README.md "Control endpoints"): the next
 * `count` requests whose method and path match are answered with `status` and a section 7
 * body, before authentication, as a failing service would. Driven by
 * `POST /_simulator/faults/http` and `POST /_simulator/faults/clear`. Not persisted.
 */
import { STATUS_CODES } from 'node:http';
import { pathOf, sendJson, type RequestHandler } from './http';

/** One injected fault. */
export interface HttpFault {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** A substring of the path below `/api/v1/p`, e.g. `/action/` or `/transfer`. */
  path: string;
  /** HTTP status to answer, 400..599 (e.g. 503). */
  status: number;
  /** How many matching requests fail; the fault is dropped when it reaches 0. */
  count: number;
}

/** The faults in force, first match first. */
export class HttpFaults {
  private faults: HttpFault[] = [];

  /** Add a fault. @returns the faults in force. */
  add(fault: HttpFault): HttpFault[] {
    this.faults.push({ ...fault, method: fault.method?.toUpperCase() });
    return this.list();
  }

  /** Remove every fault. */
  clear(): void {
    this.faults = [];
  }

  /** A copy of the faults in force. */
  list(): HttpFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /**
   * Middleware in front of the API router: answers a matching request (method, and `path` within
   * the path below the mount point) with its fault's status and section 7 body, else passes on.
   */
  readonly middleware: RequestHandler = (req, res, next) => {
    const fault = this.faults.find((f) => (!f.method || f.method === req.method) && pathOf(req).includes(f.path));
    if (!fault) return next();
    fault.count -= 1;
    if (fault.count <= 0) this.faults = this.faults.filter((f) => f !== fault);
    sendJson(res, fault.status, { code: fault.status, msg: STATUS_CODES[fault.status] ?? 'Error', detail: { reason: 'injected fault' } });
  };
}
