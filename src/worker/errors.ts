import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { ApiError, conflict, unprocessable } from "../core/errors";
import { log } from "../core/lib/log";

/** The one error body of the interface: `{code, message, fields}`. */
export const ErrorBody = z
  .object({
    code: z.number().int().openapi({ example: 422 }),
    message: z.string().openapi({ example: "Invalid input" }),
    fields: z.string().openapi({ description: "Comma-separated names of the offending fields, or empty", example: "pdt_to" }),
  })
  .openapi("Error");

export function errorResponse(c: Context, status: ContentfulStatusCode, message: string, fields = "", headers: Record<string, string> = {}) {
  return c.json({ code: status, message, fields }, status, headers);
}

/** SQLite constraint failures that slip past validation (e.g. two concurrent creates) are conflicts, not 500s. */
function constraintError(err: unknown): ApiError | null {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const unique = /UNIQUE constraint failed: ([\w., ]+)/.exec(e.message);
    if (unique) {
      const fields = unique[1].split(",").map((f) => f.trim().split(".").pop()!).filter((f) => f !== "company_id");
      return conflict(`Duplicate value: ${fields.join(", ")} already exists`, fields);
    }
    if (/FOREIGN KEY constraint failed/.test(e.message)) return unprocessable("A referenced object does not exist");
  }
  return null;
}

export function handleError(err: Error, c: Context) {
  if (err instanceof ApiError) return errorResponse(c, err.status, err.message, err.fields, err.headers);
  const constraint = constraintError(err);
  if (constraint) return errorResponse(c, constraint.status, constraint.message, constraint.fields);
  if (err instanceof HTTPException) {
    // Hono's own exceptions, e.g. the body-limit middleware or malformed JSON in a validator.
    const status = err.status === 400 ? 422 : err.status;
    return errorResponse(c, status, err.message || "Request failed");
  }
  log("error", "unhandled error", { method: c.req.method, path: c.req.path, error: err });
  return errorResponse(c, 500, "Internal error");
}

export function handleNotFound(c: Context) {
  return errorResponse(c, 404, `No route for ${c.req.method} ${new URL(c.req.url).pathname}`);
}

/** Names of the fields a zod error points at, in the client's terms. */
export function zodFields(error: ZodError): string {
  const names = new Set<string>();
  for (const issue of error.issues) {
    const path = issue.path.filter((p) => typeof p === "string" || typeof p === "number");
    names.add(path.length ? path.join(".") : issue.code === "invalid_type" ? "body" : "");
  }
  names.delete("");
  return [...names].join(",");
}

export function zodMessage(error: ZodError): string {
  return error.issues
    .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
    .slice(0, 5)
    .join("; ");
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Fields of a JSON body that its schema does not know: keys of `raw` that
 * validation dropped from `parsed` (zod strips unknown keys), at any depth.
 * Schemas that keep extra keys (`passthrough`, records) never report any.
 */
export function unknownFields(raw: unknown, parsed: unknown, path = ""): string[] {
  if (Array.isArray(raw) && Array.isArray(parsed) && raw.length === parsed.length) return raw.flatMap((r, i) => unknownFields(r, parsed[i], `${path}${i}.`));
  if (!isRecord(raw) || !isRecord(parsed)) return [];
  return Object.keys(raw).flatMap((k) => (k in parsed ? unknownFields(raw[k], parsed[k], `${path}${k}.`) : [`${path}${k}`]));
}

/**
 * `defaultHook` of every OpenAPIHono: validation failures become 422 with the
 * field names, and so do JSON body fields the endpoint does not take (unknown
 * or read-only fields are never dropped silently).
 */
export async function validationHook(result: { success: boolean; data?: unknown; error?: ZodError; target: string }, c: Context) {
  // Every JSON body of the interface is required; without the content type the validator would see `{}`.
  if (result.target === "json" && !/^application\/([\w.+-]*\+)?json\b/i.test(c.req.header("content-type") ?? "")) {
    return errorResponse(c, 422, "A JSON body (Content-Type: application/json) is required", "body");
  }
  if (!result.success && result.error) {
    const fields = zodFields(result.error) || result.target;
    return errorResponse(c, 422, `Invalid ${result.target}: ${zodMessage(result.error)}`, fields);
  }
  if (result.target === "json") {
    const unknown = unknownFields(await c.req.json(), result.data);
    if (unknown.length) return errorResponse(c, 422, `Fields not accepted here (unknown or read-only): ${unknown.slice(0, 20).join(", ")}`, unknown.slice(0, 20).join(","));
  }
}
