import { createMiddleware } from "hono/factory";
import { createDb } from "../../core/db/client";
import type { AppEnv } from "../app-env";
import { unprocessable } from "../../core/errors";

/** Request and response header carrying a D1 session bookmark (docs/operations/configuration.md, D1 sessions). */
export const BOOKMARK_HEADER = "x-d1-bookmark";
/** The shape of the bookmarks D1 hands out: `<8 hex>-<8 hex>-<8 hex>-<32..64 hex>`, sortable as text. */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32,64}$/;

/**
 * Every request runs its D1 queries in one session (D1 read replication):
 * GET and HEAD start `first-unconstrained` (the nearest replica may answer) or,
 * when the client sends the bookmark of its last answer, at a replica at least
 * that new, so a client never reads older data than it wrote or saw; every other
 * method starts `first-primary`, so the reads a write decides on are current
 * (writes go to the primary in any case). The answer carries the session's latest
 * bookmark. It runs after `resolveCompany`, on the company's shard (a bookmark
 * belongs to one database). The company's Durable Object, the queue consumers and
 * the operator endpoints keep the plain binding, which always queries the primary.
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  // Opened once per request, even where two patterns of the chain match.
  if (!("withSession" in c.env.DB)) return next();
  const given = c.req.header(BOOKMARK_HEADER);
  if (given !== undefined && !BOOKMARK.test(given)) throw unprocessable(`${BOOKMARK_HEADER} must be a bookmark from an earlier answer's ${BOOKMARK_HEADER} header`, BOOKMARK_HEADER);
  const reads = c.req.method === "GET" || c.req.method === "HEAD";
  const session = c.env.DB.withSession(reads ? (given ?? "first-unconstrained") : "first-primary");
  // The session answers prepare and batch, the only D1 calls of the request paths.
  c.env = { ...c.env, DB: session as unknown as D1Database };
  c.set("db", createDb(c.env.DB));
  await next();
  const bookmark = session.getBookmark();
  // Upgrades (101) may have immutable headers.
  if (bookmark && c.res.status !== 101) c.res.headers.set(BOOKMARK_HEADER, bookmark);
});
