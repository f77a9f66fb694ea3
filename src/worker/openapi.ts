/**
 * Helpers to declare each endpoint once: route config (zod in/out schemas),
 * role guard, shared error responses. Validation, types and the OpenAPI
 * document all come from these declarations.
 */
import { type RouteConfig, createRoute, z } from "@hono/zod-openapi";
import type { AppEnv } from "./app-env";
import { forbidden } from "../core/errors";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Role } from "../core/context";
import { ErrorBody } from "./errors";

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
  .object({ type: z.literal("Point"), coordinates: z.tuple([z.number(), z.number()]) })
  .openapi("Point", { description: "GeoJSON point, [longitude, latitude]" });

type JsonSchema = { $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; additionalProperties?: unknown; [k: string]: unknown };
type Document = { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, JsonSchema> } };

/**
 * Marks the objects of every JSON request body `additionalProperties: false`: the validation hook
 * refuses fields an endpoint does not take (422 naming them), and the document says so. Objects
 * that keep extra keys (records, passthrough) already state their `additionalProperties`.
 */
export function closeRequestBodies(document: { paths?: unknown; components?: unknown }) {
  const doc = document as Document;
  const seen = new Set<JsonSchema>();
  const close = (schema: unknown) => {
    if (typeof schema !== "object" || schema === null || seen.has(schema as JsonSchema)) return;
    const s = schema as JsonSchema;
    seen.add(s);
    if (s.$ref) close(doc.components?.schemas?.[s.$ref.split("/").pop()!]);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes("object") && s.properties && s.additionalProperties === undefined) s.additionalProperties = false;
    for (const key of ["properties"] as const) for (const p of Object.values(s[key] ?? {})) close(p);
    for (const key of ["items", "anyOf", "oneOf", "allOf", "prefixItems"]) {
      const inner = s[key];
      if (Array.isArray(inner)) inner.forEach(close);
      else close(inner);
    }
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      const body = (op as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined)?.requestBody;
      close(body?.content?.["application/json"]?.schema);
    }
  }
}
