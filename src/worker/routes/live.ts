/** `GET /ws`: the company's live channel, held by its Durable Object. */
import { OpenAPIHono } from "@hono/zod-openapi";
import { unprocessable } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { errorResponses } from "../openapi";
import { companyStub } from "../../core/services/live";

export const liveRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

liveRoutes.openAPIRegistry.registerPath({
  method: "get",
  path: "/ws",
  operationId: "openLiveChannel",
  security: [{ AccessTokenQuery: [] }],
  tags: ["Live updates"],
  summary: "Websocket of live events",
  description:
    "Upgrade with `?access_token=<jwt>` (browsers cannot set headers). Messages are JSON with a `type`: " +
    "`process`, `route`, `delivery`, `driverposition`, `eta`; send `{\"type\":\"ping\"}` for `{\"type\":\"pong\"}`. " +
    "Dispatchers and watchers receive every event of the company, drivers only their own. " +
    "The server closes the socket with code **4403** (`token revoked`) when its token stops holding: at once when the driver is deactivated, " +
    "and on a `resume` whose token was issued before the user was deactivated, removed or changed role; log in again for a new token.",
  responses: { 101: { description: "Switching protocols" }, 403: errorResponses[403], 422: errorResponses[422] },
});

liveRoutes.get("/ws", async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") throw unprocessable("Expected a websocket upgrade", "Upgrade");
  const user = c.get("user");
  const headers = new Headers(c.req.raw.headers);
  headers.set("X-User-Id", String(user.id));
  headers.set("X-User-Role", user.role);
  headers.set("X-Token-Issued", String(c.get("tokenIssuedMs")));
  return companyStub(c.env, user.companyId).fetch(new Request(c.req.raw.url, { headers }));
});
