import type { Env } from "../core/env";
import type { AuthUser, Company, Db } from "../core/context";

/** Per-request context built by the middleware chain. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    db: Db;
    company: Company;
    user: AuthUser;
    /** When the request's token was issued (its `iat`), for the websocket's later checks. */
    tokenIssuedMs: number;
  };
}
