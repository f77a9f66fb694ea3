import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { forbidden } from "../../core/errors";
import { verifyToken } from "../../core/lib/tokens";

/**
 * Second link: `Authorization: JWT <token>` (exact prefix; `Bearer` is
 * rejected). The websocket upgrade may carry the token as `access_token`
 * because browsers cannot set headers on a WebSocket.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization");
  let token: string | undefined;
  if (header !== undefined) token = header.startsWith("JWT ") ? header.slice(4).trim() : undefined;
  else if (c.req.header("Upgrade")?.toLowerCase() === "websocket") token = c.req.query("access_token");
  if (!token) throw forbidden("Missing or malformed authorization: send 'Authorization: JWT <token>'");
  const verified = await verifyToken(c.env, token);
  if (!verified || verified.user.companyId !== c.get("company").id) throw forbidden("Invalid or expired token");
  c.set("user", verified.user);
  c.set("tokenIssuedMs", verified.issuedMs);
  await next();
});
