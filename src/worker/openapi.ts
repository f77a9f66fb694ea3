/**
 * Helpers to declare each endpoint once: route config (zod in/out schemas),
 * role guard, shared error responses. Validation, types and the OpenAPI
 * document all come from these declarations.
 */
import { type RouteConfig, createRoute, z } from "@hono/zod-openapi";
import type { AppEnv } from "./app-env";
import { forbidden, unprocessable } from "../core/errors";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Role } from "../core/context";
import { ErrorBody } from "./errors";
import { IDEMPOTENCY_HOURS } from "../core/services/idempotency";
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../shared/contract/idempotency";

const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

export const errorResponses = {
  403: errorResponse("Missing or invalid authorization, or the role may not do this"),
  404: errorResponse("Unknown object or path"),
  409: errorResponse("State conflict"),
  422: errorResponse("Invalid input, naming the offending fields"),
  429: errorResponse("Rate limit exceeded"),
  500: errorResponse("Unexpected error"),
} as const;

export const ALL_ROLES: Role[] = ["dispatcher", "watcher", "driver"];

/** Route-level guard: the roles that may call the endpoint at all. */
export const requireRole = (roles: readonly Role[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (!roles.includes(c.get("user").role)) throw forbidden(`Not allowed for role ${c.get("user").role}`);
    await next();
  });

type ApiRouteConfig = Omit<RouteConfig, "middleware"> & {
  /** Who may call it. Default: every role for GET, dispatchers only otherwise (watchers are read-only). */
  roles?: readonly Role[];
};

/** Roles allowed per declared endpoint (`POST /driver` -> roles): the route table the role tests walk. */
export const declaredRoles = new Map<string, readonly Role[]>();

/** An endpoint under `/<slug>/api`: JWT security, role guard, shared error responses. */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { roles, ...rest } = config;
  const allowed = roles ?? (config.method === "get" ? ALL_ROLES : (["dispatcher"] as const));
  declaredRoles.set(`${config.method.toUpperCase()} ${config.path}`, allowed);
  return createRoute({
    ...rest,
    middleware: [requireRole(allowed)] as const,
    security: [{ JWT: [] }],
    responses: { ...errorResponses, ...config.responses },
  } as unknown as R & { middleware: [ReturnType<typeof requireRole>] });
}

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { "application/json": { schema } },
});

/**
 * An answer whose JSON text SQLite already built (db/json.ts), with the
 * headers of `c.json`. Typed as whatever the route declares: the text is the
 * presenters' shape by construction, and test/json-answers.test.ts compares it
 * with them and with the route's schema.
 */
export const jsonText = <S extends ContentfulStatusCode>(c: Context, text: string, status: S) => c.body(text, status, { "content-type": "application/json" }) as never;

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A positive integer id in the path, e.g. `IdParam("driver_id")` for `/driver/{driver_id}`. */
export const IdParam = <K extends string>(name: K) => {
  const id = z.coerce.number().int().positive().openapi({ param: { name, in: "path" }, example: 1 });
  return z.object({ [name]: id } as { [P in K]: typeof id });
};

const booleanQuery = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1")
  .openapi({ type: "boolean" });
export const BooleanQuery = booleanQuery;

/** `q`, `page`, `results_per_page` of every list endpoint (contract.md §4). */
export const ListQuery = z.object({
  q: z.string().max(20_000).optional().openapi({ description: "Flask-Restless search query (JSON): filters, order_by, limit, offset, single; at most 20,000 characters, 60 compared values (an `in` list counts once) and 10 levels of nested filters" }),
  page: z.coerce.number().int().min(1).default(1).openapi({ description: "Page number, from 1" }),
  results_per_page: z.coerce.number().int().min(1).optional().openapi({ description: "Page size; default 10, at most 100 (larger values are capped)" }),
});

/** The list envelope around any object schema. */
export const envelope = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      num_results: z.number().int(),
      objects: z.array(item),
      page: z.number().int(),
      total_pages: z.number().int(),
    })
    .openapi(name);

export const DateTime = z.string().openapi({ format: "date-time", example: "2026-11-23T08:00:00Z" });
export const Point = z
  .object({ type: z.literal("Point"), coordinates: z.tuple([z.number(), z.number()]).openapi({ minItems: 2, maxItems: 2 }) })
  .openapi("Point", { description: "GeoJSON point, [longitude, latitude]" });

/** A numeric query parameter in a range ("" and non-numbers -> 422 naming it). */
const coordinateQuery = (limit: number, description: string) =>
  z
    .string()
    .trim()
    .regex(/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/, "must be a number")
    .transform(Number)
    .pipe(z.number().min(-limit).max(limit))
    .openapi({ type: "number", minimum: -limit, maximum: limit, description });

/**
 * A point in a query: `lat`, and `lon` as the interface names it or `lng` as every body does
 * (one of the two; `pointOfQuery` refuses both or neither, naming `lon`).
 */
export const PointQuery = z.object({
  lat: coordinateQuery(90, "Latitude (WGS84), -90..90"),
  lon: coordinateQuery(180, "Longitude (WGS84), -180..180; or `lng`").optional(),
  lng: coordinateQuery(180, "Longitude, as the bodies name it: an alias of `lon` (give one of them)").optional(),
});

export function pointOfQuery(query: { lat: number; lon?: number; lng?: number }): { lat: number; lon: number } {
  if (query.lon !== undefined && query.lng !== undefined) throw unprocessable("Give the longitude as lon or as lng, not both", "lon,lng");
  const lon = query.lon ?? query.lng;
  if (lon === undefined) throw unprocessable("lon is required (or its alias lng)", "lon");
  return { lat: query.lat, lon };
}

type JsonSchema = { $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; additionalProperties?: unknown; [k: string]: unknown };
type Document = { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, JsonSchema> } };

type Operation = { requestBody?: { content?: Record<string, { schema?: unknown }> }; parameters?: { schema?: unknown }[] };

/** Calls `visit` once on every schema a client sends (JSON bodies; with `all`, also forms and parameters), through `$ref`s and nesting. */
function eachRequestSchema(document: { paths?: unknown; components?: unknown }, visit: (schema: JsonSchema) => void, which: "json" | "all") {
  const doc = document as Document;
  const seen = new Set<JsonSchema>();
  const walk = (schema: unknown) => {
    if (typeof schema !== "object" || schema === null || seen.has(schema as JsonSchema)) return;
    const s = schema as JsonSchema;
    seen.add(s);
    if (s.$ref) walk(doc.components?.schemas?.[s.$ref.split("/").pop()!]);
    visit(s);
    for (const p of Object.values(s.properties ?? {})) walk(p);
    for (const key of ["items", "anyOf", "oneOf", "allOf", "prefixItems"]) {
      const inner = s[key];
      if (Array.isArray(inner)) inner.forEach(walk);
      else walk(inner);
    }
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item) as (Operation | undefined)[]) {
      for (const [type, media] of Object.entries(op?.requestBody?.content ?? {})) if (which === "all" || type === "application/json") walk(media.schema);
      if (which === "all") for (const parameter of op?.parameters ?? []) walk(parameter.schema);
    }
  }
}

const typesOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type : [s.type]);

/**
 * Marks the objects of every JSON request body `additionalProperties: false`: the validation hook refuses fields an
 * endpoint does not take (422 naming them), and the document says so. Objects that keep extra keys (records,
 * passthrough) already state their `additionalProperties`.
 */
export function closeRequestBodies(document: { paths?: unknown; components?: unknown }) {
  eachRequestSchema(document, (s) => {
    if (typesOf(s).includes("object") && s.properties && s.additionalProperties === undefined) s.additionalProperties = false;
  }, "json");
}

/**
 * States the bounds zod keeps on every integer a client sends where the schema names none: zod takes safe
 * integers only (|n| < 2^53), which fit a 64-bit integer (SQLite's INTEGER, D1's column type).
 */
export function declareIntegerBounds(document: { paths?: unknown; components?: unknown }) {
  eachRequestSchema(document, (s) => {
    if (!typesOf(s).includes("integer")) return;
    s.format ??= "int64";
    if (s.minimum === undefined && s.exclusiveMinimum === undefined) s.minimum = Number.MIN_SAFE_INTEGER;
    if (s.maximum === undefined && s.exclusiveMaximum === undefined) s.maximum = Number.MAX_SAFE_INTEGER;
  }, "all");
}

type Responses = Record<string, { headers?: Record<string, unknown> } & Record<string, unknown>>;

/** Paths outside `/{slug}` under the per-client limit (app.ts applies it to the same list); `/health` has none: it touches nothing. */
export const CLIENT_LIMITED_PATHS = ["/_operator/", "/tiles/", "/openapi.json", "/docs"] as const;

/**
 * What every answer of the service carries, declared on every operation: CORS's `Access-Control-Allow-Origin`
 * (app.ts), the 500 of the error handler, and where the rate limit applies (rate-limit.ts) the
 * `RateLimit-Policy` and `RateLimit` headers on every 2xx and 4xx answer and the 429 with `Retry-After`.
 */
export function declareCommonAnswers(document: { paths?: unknown; components?: unknown }) {
  const doc = document as { paths?: Record<string, Record<string, { responses?: Responses }>>; components?: Record<string, Record<string, unknown>> };
  const header = (description: string, example: string) => ({ description, schema: { type: "string", maxLength: 200 }, example });
  doc.components ??= {};
  doc.components.headers = {
    ...doc.components.headers,
    "Access-Control-Allow-Origin": header("CORS: `*`, or the caller's origin where the deployment lists the origins it serves (`CORS_ORIGINS`)", "*"),
    "RateLimit-Policy": header("The limit (IETF draft \"RateLimit header fields for HTTP\"): `q` requests per `w` seconds, per company (`company`) or per client address (`client`)", '"company";q=200;w=1'),
    RateLimit: header("What is left of the limit: `r` requests, full again in `t` seconds (this edge's count; the limit across locations may refuse earlier)", '"company";r=180;t=1'),
    "Retry-After": header("Seconds to wait before the next request", "1"),
  };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  // The document is generated by now: the error body goes in as its component, not as the zod schema.
  const error = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
  const cors = { "Access-Control-Allow-Origin": ref("Access-Control-Allow-Origin") };
  const limits = { "RateLimit-Policy": ref("RateLimit-Policy"), RateLimit: ref("RateLimit") };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const limited = path.startsWith("/{slug}/") || CLIENT_LIMITED_PATHS.some((p) => path.startsWith(p));
    for (const op of Object.values(item)) {
      if (!op?.responses) continue;
      op.responses["500"] ??= error(errorResponses[500].description);
      if (limited) op.responses["429"] = { ...error(errorResponses[429].description), headers: { "Retry-After": ref("Retry-After") } };
      for (const [status, response] of Object.entries(op.responses)) {
        const extra = limited && /^[24]/.test(status) ? { ...cors, ...limits } : cors;
        op.responses[status] = { ...response, headers: { ...response.headers, ...extra } };
      }
    }
  }
}

/**
 * `Idempotency-Key` on every POST and PATCH under `/{slug}/api` (middleware/idempotency.ts): the header as one
 * parameter component, the replay marker on its 2xx answers, and its 409 and 422 in the answers' descriptions.
 */
export function declareIdempotency(document: { paths?: unknown; components?: unknown }) {
  const doc = document as { paths?: Record<string, Record<string, { parameters?: unknown[]; responses?: Responses }>>; components?: Record<string, Record<string, unknown>> };
  doc.components ??= {};
  doc.components.parameters = {
    ...doc.components.parameters,
    IdempotencyKey: {
      name: IDEMPOTENCY_HEADER,
      in: "header",
      required: false,
      description:
        `Makes a retry safe (IETF draft "The Idempotency-Key HTTP Header Field"): 1 to 255 visible ASCII characters, e.g. a UUID, bare or as a quoted string. ` +
        `The first request with a key runs and its answer is kept ${IDEMPOTENCY_HOURS} hours per user and key; a repeat with the same method, path and body answers it again ` +
        `(\`${IDEMPOTENT_REPLAYED_HEADER}: true\`) without doing the work again. The same key with another request: 422; a repeat while the first still runs: 409 with Retry-After. ` +
        "5xx and 429 answers are not kept (the repeat runs).",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
      example: "8e03978e-40d5-43e8-bc93-6894a57f9324",
    },
  };
  doc.components.headers = {
    ...doc.components.headers,
    [IDEMPOTENT_REPLAYED_HEADER]: { description: `\`true\` on the stored answer of an earlier request with the same \`${IDEMPOTENCY_HEADER}\``, schema: { type: "string", enum: ["true"] } },
  };
  const error = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith("/{slug}/api/")) continue;
    for (const [method, op] of Object.entries(item)) {
      if ((method !== "post" && method !== "patch") || !op?.responses) continue;
      op.parameters = [...(op.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }];
      const responses = op.responses;
      const also = (status: string, text: string) => {
        const given = responses[status] as { description?: string } | undefined;
        responses[status] = given ? { ...given, description: `${given.description}; ${text}` } : error(text);
      };
      also("409", `a request with the same ${IDEMPOTENCY_HEADER} is still running`);
      also("422", `the ${IDEMPOTENCY_HEADER} was used for another request`);
      for (const [status, response] of Object.entries(responses)) {
        if (status.startsWith("2")) responses[status] = { ...response, headers: { ...(response as { headers?: object }).headers, [IDEMPOTENT_REPLAYED_HEADER]: { $ref: `#/components/headers/${IDEMPOTENT_REPLAYED_HEADER}` } } };
      }
    }
  }
}
