import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { ApiError, unprocessable } from "../../core/errors";
import { log } from "../../core/lib/log";
import { IDEMPOTENCY_HOURS, type KeyedRequest, claimKey, keepAnswer, keptStatus, releaseKey, requestFingerprint } from "../../core/services/idempotency";
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../../shared/contract/idempotency";

/** A key: 1 to 255 visible ASCII characters, as a structured-field string (`"..."`, the draft's form) or bare (Stripe's). */
const KEY = /^[\x21-\x7e]{1,255}$/;

function keyOf(header: string): string {
  const bare = header.trim();
  const key = bare.length >= 2 && bare.startsWith('"') && bare.endsWith('"') ? bare.slice(1, -1) : bare;
  if (!KEY.test(key)) throw unprocessable(`${IDEMPOTENCY_HEADER} must be 1 to 255 visible ASCII characters (e.g. a UUID)`, IDEMPOTENCY_HEADER);
  return key;
}

/**
 * `Idempotency-Key` on POST and PATCH under `/<slug>/api` (after authentication:
 * keys are per company and user). The first request with a key runs and its
 * answer is kept IDEMPOTENCY_HOURS; a repeat with the same method, path and body
 * gets that answer with `Idempotent-Replayed: true` and nothing is done again;
 * the same key with another request is a 422; a repeat while the first runs, a
 * 409 with Retry-After. Requests without the header, and other methods, pass.
 */
export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  const given = c.req.header(IDEMPOTENCY_HEADER);
  if (given === undefined || (c.req.method !== "POST" && c.req.method !== "PATCH")) return next();
  const url = new URL(c.req.url);
  // Hono keeps the body read here for the handler's own reading (json, formData).
  const body = new Uint8Array(await c.req.arrayBuffer());
  const request: KeyedRequest = {
    companyId: c.get("company").id,
    userId: c.get("user").id,
    key: keyOf(given),
    fingerprint: await requestFingerprint(c.req.method, url.pathname + url.search, c.req.header("content-type"), body),
  };
  const db = c.get("db");
  const claim = await claimKey(db, request);
  if (claim.kind === "mismatch") throw unprocessable(`This ${IDEMPOTENCY_HEADER} was used for another request (method, path or body) in the last ${IDEMPOTENCY_HOURS} hours: use a new key for a new request`, IDEMPOTENCY_HEADER);
  if (claim.kind === "running") throw new ApiError(409, `A request with this ${IDEMPOTENCY_HEADER} is still running: repeat it once that one has answered`, IDEMPOTENCY_HEADER, { "Retry-After": "1" });
  if (claim.kind === "replay") {
    const { status, contentType, location, body: kept } = claim.answer;
    if (kept === null) throw new ApiError(409, `The request with this ${IDEMPOTENCY_HEADER} was done (it answered ${status}); its answer was too large to keep`, IDEMPOTENCY_HEADER);
    const headers = new Headers({ [IDEMPOTENT_REPLAYED_HEADER]: "true" });
    if (contentType) headers.set("content-type", contentType);
    if (location) headers.set("location", location);
    return new Response(status === 204 ? null : kept, { status, headers });
  }
  await next();
  const status = c.res.status;
  const answer = { status, contentType: c.res.headers.get("content-type"), location: c.res.headers.get("location"), body: await c.res.clone().text() };
  // The work is done: its answer goes out even when keeping it fails (the key then frees itself at `held_until`).
  await (keptStatus(status) ? keepAnswer(db, request, claim.holder, answer) : releaseKey(db, request, claim.holder)).catch((error: unknown) =>
    log("error", "idempotency key not settled", { key: request.key, status, error }),
  );
});
