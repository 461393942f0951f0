/**
 * HTTP fault injection for the signed API (DESIGN.md "The simulator": inject faults): the next
 * `count` requests whose method and path match are answered with `status` and a section 7
 * body, before authentication, as a failing service would. Driven by
 * `POST /_simulator/faults/http` and `POST /_simulator/faults/clear`. Not persisted.
 */
import { STATUS_CODES } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

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

  /** Express middleware for the API router: answers a matching request with its fault. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const fault = this.faults.find((f) => (!f.method || f.method === req.method) && req.path.includes(f.path));
    if (!fault) return next();
    fault.count -= 1;
    if (fault.count <= 0) this.faults = this.faults.filter((f) => f !== fault);
    res.status(fault.status).json({ code: fault.status, msg: STATUS_CODES[fault.status] ?? 'Error', detail: { reason: 'injected fault' } });
  };
}
