import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { forbidden } from "../../core/errors";
import { tokenHolds, verifyToken } from "../../core/lib/tokens";
import { companyStub } from "../../core/services/live";
import { ACCESS_TOKEN_IN_URL, ACCESS_TOKEN_IN_URL_MS } from "../../shared/contract/live";

/**
 * Second link: `Authorization: JWT <token>` (exact prefix; `Bearer` is
 * rejected). Browsers cannot set headers on a WebSocket: its upgrade carries
 * a single-use `ticket` of `POST /ws/ticket`, or (deprecated, until
 * ACCESS_TOKEN_IN_URL.sunset) the token itself as `access_token`.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization");
  let token: string | undefined;
  if (header !== undefined) token = header.startsWith("JWT ") ? header.slice(4).trim() : undefined;
  else if (c.req.header("Upgrade")?.toLowerCase() === "websocket") {
    const ticket = c.req.query("ticket");
    if (ticket !== undefined) {
      const company = c.get("company").id;
      const holder = ticket.length <= 100 ? await companyStub(c.env, company).redeemWsTicket(ticket) : null;
      if (!holder || holder.user.companyId !== company || !(await tokenHolds(c.env, holder.user, holder.tokenIssuedMs)))
        throw forbidden("Invalid, used or expired ticket: ask POST /ws/ticket for a new one");
      c.set("user", holder.user);
      c.set("tokenIssuedMs", holder.tokenIssuedMs);
      return next();
    }
    token = c.req.query("access_token");
    if (token !== undefined && Date.now() >= ACCESS_TOKEN_IN_URL_MS.sunset)
      throw forbidden(`The access token in the URL ended on ${ACCESS_TOKEN_IN_URL.sunset}: open the socket with a ticket of POST /ws/ticket`);
  }
  if (!token) throw forbidden("Missing or malformed authorization: send 'Authorization: JWT <token>'");
  const verified = await verifyToken(c.env, token);
  if (!verified || verified.user.companyId !== c.get("company").id) throw forbidden("Invalid or expired token");
  c.set("user", verified.user);
  c.set("tokenIssuedMs", verified.issuedMs);
  await next();
});
