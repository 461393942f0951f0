/**
 * The part of `router` 2.x (pillarjs/router: the router express 5 is built on) that the simulator
 * uses; the registry has no `@types/router`. Only simulator/http.ts imports it: everything else
 * uses that module's own types (SimRouter, SimRequest, SimResponse), so no emitted declaration
 * of dist/ names this module.
 *
 * Source: router 2.3.0 README ("API") and index.js.
 */
declare module 'router' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  namespace Router {
    /** `Router(options)` (README "Router(options)"); every option defaults to false. */
    interface RouterOptions {
      /** match paths case-sensitively */
      caseSensitive?: boolean;
      /** keep the parent router's `req.params` */
      mergeParams?: boolean;
      /** a trailing `/` is significant */
      strict?: boolean;
    }
    /** `next(err?)`: pass on to the next matching handler, or with an error to the error handlers. */
    type NextFunction = (err?: unknown) => void;
    /** A middleware or route handler; four parameters make an error handler. */
    type Handler = ((req: IncomingMessage, res: ServerResponse, next: NextFunction) => void) | ((err: unknown, req: IncomingMessage, res: ServerResponse, next: NextFunction) => void);
    /** A router: itself a middleware, with the method and `use` registration functions. */
    interface Router {
      (req: IncomingMessage, res: ServerResponse, next: NextFunction): void;
      /** Dispatch a request; `done` is called when no handler answered (with the error, if any). */
      handle(req: IncomingMessage, res: ServerResponse, done: NextFunction): void;
      use(...handlers: Handler[]): this;
      use(path: string, ...handlers: Handler[]): this;
      get(path: string, ...handlers: Handler[]): this;
      post(path: string, ...handlers: Handler[]): this;
      put(path: string, ...handlers: Handler[]): this;
      delete(path: string, ...handlers: Handler[]): this;
      /** the layers, in registration order (`layer.route` for a method route) */
      stack: unknown[];
    }
  }

  /** Make a router (callable with or without `new`). */
  function Router(options?: Router.RouterOptions): Router.Router;
  export = Router;
}
