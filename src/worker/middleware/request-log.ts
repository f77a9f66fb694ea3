import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { log, withRequestContext } from "../../core/lib/log";

/** A request id a client or proxy may send along; anything else is replaced by a fresh one. */
const CLIENT_ID = /^[\w.:-]{1,64}$/;

/**
 * Outermost link: the request id (`X-Request-Id` from the client when sane,
 * else a UUID), echoed in the `X-Request-Id` response header, the log context
 * of everything the request writes, and one access line per request (path
 * without the query: the websocket token travels in it).
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const given = c.req.header("X-Request-Id");
  const id = given && CLIENT_ID.test(given) ? given : crypto.randomUUID();
  const started = Date.now();
  await withRequestContext(id, async () => {
    await next();
    // Upgrades (101) and responses passed through from elsewhere may have immutable headers.
    if (c.res.status !== 101) c.res.headers.set("X-Request-Id", id);
    const user = c.get("user");
    log("info", "request", { method: c.req.method, path: c.req.path, status: c.res.status, duration_ms: Date.now() - started, user_id: user?.id ?? null, role: user?.role ?? null });
  });
});
