/**
 * The HTTP edge: one middleware chain per area, then the resource routes.
 *   *                   request id + log context -> CORS -> body limit
 *   /_operator/*        rate limit per client -> operator token
 *   /tiles/*            rate limit per client -> the base map (public, not company-scoped; routes/map.ts)
 *   /openapi.json, /docs   rate limit per client (CLIENT_LIMITED_PATHS; /health has none)
 *   /<slug>/auth        company (its shard) -> D1 session -> login
 *   /<slug>/register    company -> registration with a code
 *   /<slug>/api/*       company (its shard) -> D1 session -> rate limit -> JWT -> idempotency key -> (route) role guard -> handler
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../core/errors";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { AppEnv } from "./app-env";
import { handleError, handleNotFound, validationHook } from "./errors";
import { renderDocs } from "./docs";
import { authenticate } from "./middleware/auth";
import { BOOKMARK_HEADER, d1Session } from "./middleware/d1-session";
import { RATE_LIMIT_HEADERS, clientRateLimit, rateLimit } from "./middleware/rate-limit";
import { idempotency } from "./middleware/idempotency";
import { requestLog } from "./middleware/request-log";
import { resolveCompany } from "./middleware/tenancy";
import { CLIENT_LIMITED_PATHS, closeRequestBodies, declareIntegerBounds, declareCommonAnswers, declareIdempotency } from "./openapi";
import { accountRoutes } from "./routes/account";
import { areaRoutes } from "./routes/areas";
import { addressRoutes } from "./routes/addresses";
import { availabilityRoutes } from "./routes/availability";
import { companyRoutes, publicBase } from "./routes/company";
import { deliveryRoutes } from "./routes/deliveries";
import { driverRoutes } from "./routes/drivers";
import { lifecycleRoutes } from "./routes/lifecycle";
import { liveRoutes } from "./routes/live";
import { mapRoutes } from "./routes/map";
import { operatorRoutes } from "./routes/operator";
import { routingRoutes } from "./routes/routing";
import { reportRoutes } from "./routes/report";
import { routeRoutes } from "./routes/routes";
import { trackingRoutes } from "./routes/tracking";
import { uploadRoutes } from "./routes/uploads";
import { vehicleRoutes } from "./routes/vehicles";
import { webhookRoutes } from "./routes/webhooks";
import { customerTrackingRoutes, trackingLinkRoutes } from "./routes/customer-tracking";
import { proofImageRoutes, proofRoutes } from "./routes/proofs";
import { securityHeaders } from "./middleware/security-headers";
import { ACCESS_TOKEN_IN_URL, WS_TICKET_SECONDS } from "../shared/contract/live";
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../shared/contract/idempotency";

const newRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

/** Resource routes under `/<slug>/api`, each group declared in its own module. */
export const apiRoutes = newRouter()
  .route("/", companyRoutes)
  .route("/", addressRoutes)
  .route("/", deliveryRoutes)
  .route("/", liveRoutes)
  .route("/", routingRoutes)
  .route("/", lifecycleRoutes)
  .route("/", uploadRoutes)
  .route("/", driverRoutes)
  .route("/", availabilityRoutes)
  .route("/", trackingRoutes)
  .route("/", vehicleRoutes)
  .route("/", routeRoutes)
  .route("/", areaRoutes)
  .route("/", webhookRoutes)
  .route("/", trackingLinkRoutes)
  .route("/", proofRoutes)
  .route("/", reportRoutes);

const MAX_BODY_BYTES = 5 * 1024 * 1024;

export function createApp() {
  const company = newRouter();
  company.use("/auth", resolveCompany, d1Session, rateLimit);
  company.use("/register", resolveCompany, d1Session, rateLimit);
  company.use("/register/*", resolveCompany, d1Session, rateLimit);
  company.use("/t/*", resolveCompany, d1Session, rateLimit);
  company.use("/track/*", resolveCompany, d1Session, rateLimit);
  company.use("/proofimage/*", resolveCompany, d1Session, rateLimit);
  company.use("/api/*", resolveCompany, d1Session, rateLimit, authenticate, idempotency);
  company.route("/", accountRoutes).route("/", customerTrackingRoutes).route("/", proofImageRoutes).route("/api", apiRoutes);

  const app = newRouter();
  app.use("*", requestLog);
  app.use("*", securityHeaders);
  // Browser clients (dispatcher consoles) send the token in a header, never cookies: any origin may call unless configured.
  app.use("*", (c, next) =>
    cors({
      origin: c.env.CORS_ORIGINS ? c.env.CORS_ORIGINS.split(",").map((o) => o.trim()) : "*",
      allowHeaders: ["Authorization", "Content-Type", "X-Request-Id", BOOKMARK_HEADER, IDEMPOTENCY_HEADER],
      exposeHeaders: ["X-Request-Id", "Retry-After", ...RATE_LIMIT_HEADERS, BOOKMARK_HEADER, IDEMPOTENT_REPLAYED_HEADER],
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      maxAge: 86400,
    })(c, next),
  );
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, `Request body larger than ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );
  for (const own of CLIENT_LIMITED_PATHS) app.use(own.endsWith("/") ? `${own}*` : own, clientRateLimit);
  app.route("/_operator", operatorRoutes);
  // The base map: public (the tracking page reads it too), not company-scoped, before `/:slug`.
  app.route("/", mapRoutes);
  app.route("/:slug", company);

  // Liveness for load balancers and monitors: no binding is touched.
  app.get("/health", (c) => c.json({ status: "ok" }));
  // `servers`: the origin the document was asked from, so tools call the deployment they read it from.
  app.get("/openapi.json", (c) => c.json({ ...openApiDocument(app), servers: [thisServer(publicBase(c))] }));
  app.get("/docs", (c) => c.html(renderDocs(openApiDocument(app))));
  app.onError(handleError);
  app.notFound(handleNotFound);
  return app;
}

/** The deployment the document was read from, public (`x-internal: false`), named local when it runs on this machine. */
function thisServer(url: string) {
  const local = ["localhost", "127.0.0.1", "[::1]"].includes(new URL(url).hostname);
  return { url, description: local ? "This deployment (local development)" : "This deployment (production)", "x-internal": false };
}

let cachedDocument: ReturnType<OpenAPIHono["getOpenAPI31Document"]> | undefined;

/** The OpenAPI 3.1 document of every declared endpoint (built once per isolate). */
function openApiDocument(app: OpenAPIHono<AppEnv>) {
  if (cachedDocument) return cachedDocument;
  app.openAPIRegistry.registerComponent("securitySchemes", "JWT", {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "`JWT <access_token>` from `POST /{slug}/auth` (the prefix `JWT ` is mandatory).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "Operator", { type: "http", scheme: "bearer", description: "OPERATOR_TOKEN" });
  app.openAPIRegistry.registerComponent("securitySchemes", "AccessTokenQuery", {
    type: "apiKey",
    in: "query",
    name: "access_token",
    description: `Deprecated (refused from ${ACCESS_TOKEN_IN_URL.sunset}): the access token of \`POST /{slug}/auth\` as a query parameter of the websocket's upgrade. Use \`WsTicket\`.`,
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "WsTicket", {
    type: "apiKey",
    in: "query",
    name: "ticket",
    description: `A ticket of \`POST /{slug}/api/ws/ticket\`: opens one websocket within ${WS_TICKET_SECONDS} s (browsers cannot set a websocket's headers; a single-use ticket in a URL is worth nothing in a log).`,
  });
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Dispatch and routing service",
      version: "1.0.0",
      // No open licence: the interface is the operator's; an SPDX reference of its own says so (`identifier` is 3.1, not in the generator's 3.0 type).
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as { name: string },
      description:
        "Delivery dispatch and time-window route planning. Company endpoints live under `/{slug}` (the company's slug); " +
        "lists answer `{num_results, objects, page, total_pages}` and take `q` in the Flask-Restless search format; " +
        "errors answer `{code, message, fields}`. Reads may be served by the nearest database replica: every answer that " +
        "touched the database carries the session's bookmark in `x-d1-bookmark`; send the newest one you received back in " +
        "`x-d1-bookmark` and no answer is older than what you wrote or read before (a value that is not such a bookmark is a 422).",
    },
    // Every operation needs `Authorization: JWT <token>` unless it declares otherwise (the public ones: `security: []`).
    security: [{ JWT: [] }],
  });
  closeRequestBodies(doc);
  declareIntegerBounds(doc);
  declareIdempotency(doc);
  declareCommonAnswers(doc);
  const slugParam = { name: "slug", in: "path", required: true, schema: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{1,39}$", maxLength: 40 }, description: "Company slug" };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith("/{slug}/")) continue;
    for (const op of Object.values(item as Record<string, { parameters?: unknown[] }>)) {
      if (typeof op === "object" && op && "responses" in op) op.parameters = [slugParam, ...(op.parameters ?? [])];
    }
  }
  cachedDocument = doc;
  return doc;
}
