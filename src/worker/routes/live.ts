/** `GET /ws`: the company's live channel, held by its Durable Object; `POST /ws/ticket`: what opens it. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { unprocessable } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { ALL_ROLES, apiRoute, errorResponses, jsonResponse } from "../openapi";
import { companyStub } from "../../core/services/live";
import { ACCESS_TOKEN_IN_URL, ACCESS_TOKEN_IN_URL_MS, WS_TICKET_SECONDS, type WsTicket } from "../../shared/contract/live";
import { apiBase } from "./company";

export const liveRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

const WsTicketSchema = z
  .object({
    ticket: z.string().openapi({ description: "Opens one websocket (`GET /ws?ticket=`), once" }),
    expires_in: z.number().int().openapi({ description: "Seconds the ticket stays good", example: WS_TICKET_SECONDS }),
    url: z.string().openapi({ format: "uri", description: "The socket's absolute URL with the ticket (`wss:` where the service is served over TLS)" }),
  })
  .openapi("WsTicket") satisfies z.ZodType<WsTicket>;

const createTicket = apiRoute({
  method: "post",
  path: "/ws/ticket",
  operationId: "createLiveChannelTicket",
  roles: ALL_ROLES,
  tags: ["Live updates"],
  summary: "A ticket that opens the websocket",
  description:
    `Browsers cannot set headers on a websocket, and a URL ends up in proxies' logs and browsers' history: the access token is exchanged here ` +
    `for a random ticket that opens one socket within ${WS_TICKET_SECONDS} s (\`GET /ws?ticket=\`, or \`url\` as it is). ` +
    "A used or expired ticket is refused (403); ask for a new one on every (re)connect. The socket then holds as long as the access token would.",
  responses: { 201: jsonResponse(WsTicketSchema, "The ticket") },
});

liveRoutes.openapi(createTicket, async (c) => {
  const user = c.get("user");
  const ticket = await companyStub(c.env, user.companyId).issueWsTicket(user, c.get("tokenIssuedMs"));
  const url = `${apiBase(c).replace(/^http/, "ws")}/ws?ticket=${ticket}`;
  return c.json({ ticket, expires_in: WS_TICKET_SECONDS, url }, 201);
});

liveRoutes.openAPIRegistry.registerPath({
  method: "get",
  path: "/ws",
  operationId: "openLiveChannel",
  security: [{ WsTicket: [] }, { AccessTokenQuery: [] }],
  tags: ["Live updates"],
  summary: "Websocket of live events",
  description:
    "Upgrade with `?ticket=<ticket>` of `POST /ws/ticket` (browsers cannot set headers on a websocket). " +
    `Deprecated: \`?access_token=<jwt>\`, the access token itself in the URL, works until ${ACCESS_TOKEN_IN_URL.sunset} ` +
    "(its answers carry `Deprecation` and `Sunset`). Messages are JSON with a `type`: " +
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
  const socket = await companyStub(c.env, user.companyId).fetch(new Request(c.req.raw.url, { headers }));
  if (c.req.query("ticket") !== undefined || socket.status !== 101) return socket;
  // The token in the URL (RFC 9745, RFC 8594): clients and their logs learn of the end before it comes.
  const answer = new Response(null, { status: 101, webSocket: socket.webSocket, headers: socket.headers });
  answer.headers.set("Deprecation", `@${ACCESS_TOKEN_IN_URL_MS.deprecated / 1000}`);
  answer.headers.set("Sunset", new Date(ACCESS_TOKEN_IN_URL_MS.sunset).toUTCString());
  return answer;
});
