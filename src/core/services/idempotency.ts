/**
 * Idempotency keys (IETF draft "The Idempotency-Key HTTP Header Field"): a
 * POST or PATCH sent with `Idempotency-Key` does its work once per company,
 * user and key; a repeat with the same request gets the first answer back.
 *
 * The key's row is claimed by one INSERT on the primary database, so of any
 * number of concurrent repeats exactly one runs the work: the others find the
 * row and answer 409 while it runs (or the stored answer once it is done). A
 * request cut off before it answered (an isolate gone) holds its key only until
 * `held_until`; a repeat after that runs again. Answers the client should retry
 * (5xx, 429) are not kept: the key is released with them.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../context";
import { idempotencyKeys } from "../db/schema";
import { formatDateTime } from "../lib/time";

/** How long an answer is kept for its key (and the key stays bound to its request). */
export const IDEMPOTENCY_HOURS = 24;
/** How long a running request holds its key before a repeat may take it over (the longest synchronous work, a re-plan in the request, is far shorter). */
export const HOLD_SECONDS = 300;
/** Answers larger than this keep their status only (a D1 row holds at most 2 MB). */
export const MAX_KEPT_BODY_BYTES = 1_000_000;

export interface KeyedRequest {
  companyId: number;
  userId: number;
  key: string;
  fingerprint: string;
}

export interface StoredAnswer {
  status: number;
  contentType: string | null;
  location: string | null;
  /** Null when the answer was larger than MAX_KEPT_BODY_BYTES. */
  body: string | null;
}

export type Claim =
  | { kind: "run"; holder: string }
  | { kind: "replay"; answer: StoredAnswer }
  | { kind: "running" }
  /** The key was used for another request (method, path or body). */
  | { kind: "mismatch" };

const keyOf = (r: KeyedRequest) => and(eq(idempotencyKeys.company_id, r.companyId), eq(idempotencyKeys.user_id, r.userId), eq(idempotencyKeys.key, r.key));

/**
 * What the request with this key may do: run (it holds the key now), replay the
 * stored answer, wait (another request with the key runs), or nothing (mismatch).
 */
export async function claimKey(db: Db, request: KeyedRequest, nowMs = Date.now()): Promise<Claim> {
  const holder = crypto.randomUUID();
  const heldUntil = formatDateTime(nowMs + HOLD_SECONDS * 1000);
  const expired = formatDateTime(nowMs - IDEMPOTENCY_HOURS * 3_600_000);
  // Three rounds at most: a row pruned, expired or taken over between the statements sends the loop round again.
  for (let round = 0; round < 3; round++) {
    const inserted = await db
      .insert(idempotencyKeys)
      .values({ company_id: request.companyId, user_id: request.userId, key: request.key, fingerprint: request.fingerprint, holder, held_until: heldUntil, created_at: formatDateTime(nowMs) })
      .onConflictDoNothing()
      .returning({ holder: idempotencyKeys.holder });
    if (inserted.length) return { kind: "run", holder };
    const row = await db.select().from(idempotencyKeys).where(keyOf(request)).get();
    if (!row) continue;
    if (row.created_at < expired) {
      // Past its time but not pruned yet: the key is free again.
      await db.delete(idempotencyKeys).where(and(keyOf(request), eq(idempotencyKeys.created_at, row.created_at)));
      continue;
    }
    if (row.fingerprint !== request.fingerprint) return { kind: "mismatch" };
    if (row.status !== null) return { kind: "replay", answer: { status: row.status, contentType: row.content_type, location: row.location, body: row.body } };
    if (row.held_until !== null && row.held_until > formatDateTime(nowMs)) return { kind: "running" };
    // The holder was cut off: take the key over, unless another repeat just did.
    const taken = await db
      .update(idempotencyKeys)
      .set({ holder, held_until: heldUntil })
      .where(and(keyOf(request), isNull(idempotencyKeys.status), row.holder === null ? isNull(idempotencyKeys.holder) : eq(idempotencyKeys.holder, row.holder)))
      .returning({ holder: idempotencyKeys.holder });
    if (taken.length) return { kind: "run", holder };
  }
  return { kind: "running" };
}

/** Keeps the answer of the request that held the key (a holder taken over keeps nothing). */
export async function keepAnswer(db: Db, request: KeyedRequest, holder: string, answer: StoredAnswer): Promise<void> {
  const body = answer.body !== null && answer.body.length > MAX_KEPT_BODY_BYTES ? null : answer.body;
  await db
    .update(idempotencyKeys)
    .set({ status: answer.status, content_type: answer.contentType, location: answer.location, body, holder: null, held_until: null })
    .where(and(keyOf(request), eq(idempotencyKeys.holder, holder)));
}

/** Frees the key after an answer the client should retry: the repeat runs the work. */
export async function releaseKey(db: Db, request: KeyedRequest, holder: string): Promise<void> {
  await db.delete(idempotencyKeys).where(and(keyOf(request), eq(idempotencyKeys.holder, holder)));
}

/** Whether an answer is kept for its key: everything but what asks to be retried (5xx, 429). */
export const keptStatus = (status: number) => status < 500 && status !== 429;

/**
 * The request's fingerprint: SHA-256 of method, path with query, and body. A
 * multipart body's boundary is random per send (a retried FormData gets a new
 * one), so it is taken out first: the same parts give the same fingerprint.
 */
export async function requestFingerprint(method: string, pathAndQuery: string, contentType: string | undefined, body: Uint8Array): Promise<string> {
  let bytes = body;
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(contentType ?? "")?.[1];
  if (boundary) bytes = new Uint8Array(Buffer.from(Buffer.from(body).toString("latin1").split(boundary).join(""), "latin1"));
  const head = new TextEncoder().encode(`${method} ${pathAndQuery}\n`);
  const all = new Uint8Array(head.length + bytes.length);
  all.set(head);
  all.set(bytes, head.length);
  return Buffer.from(await crypto.subtle.digest("SHA-256", all)).toString("hex");
}
