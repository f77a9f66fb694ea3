import { eq } from "drizzle-orm";
import type { AuthUser, Role } from "../context";
import { SignJWT, jwtVerify } from "jose";
import { createDb } from "../db/client";
import { users } from "../db/schema";
import type { Env } from "../env";

const ALGORITHM = "HS256";
const ROLES: Role[] = ["dispatcher", "watcher", "driver"];

/** The HMAC key of the secret, imported once per isolate (jose would import raw bytes on every call). */
let signingKey: { secret: string; key: Promise<CryptoKey> } | undefined;
function secretKey(env: Env): Promise<CryptoKey> {
  if (signingKey?.secret !== env.JWT_SECRET) {
    const key = crypto.subtle.importKey("raw", new TextEncoder().encode(env.JWT_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    signingKey = { secret: env.JWT_SECRET, key };
  }
  return signingKey.key;
}

export async function issueToken(env: Env, user: AuthUser): Promise<string> {
  const ttl = Number(env.TOKEN_TTL_SECONDS ?? 86400) || 86400;
  return new SignJWT({ cid: user.companyId, role: user.role })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setSubject(String(user.id))
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(await secretKey(env));
}

/**
 * Tokens this isolate has verified, until they expire: a client sends the
 * same token with every request, and the signature check is a large part of
 * a cheap request's CPU. Bounded; keyed by token and secret.
 */
const verified = new Map<string, { secret: string; user: AuthUser; issuedMs: number; expiresMs: number }>();
const MAX_VERIFIED = 5000;

/**
 * A token also ends early: when its user is removed, changes role, or was
 * deactivated after the token was issued (`users.tokens_valid_after`). Each
 * isolate reads the user's row at most every USER_RECHECK_MS, so a token
 * stops working everywhere within that time (at once in the isolate that made
 * the change, see `forgetUser`).
 */
export const USER_RECHECK_MS = 30_000;
type UserState = { companyId: number; role: Role; validAfterMs: number } | null;
const userStates = new Map<number, { state: UserState; until: number }>();

async function userState(env: Env, id: number): Promise<UserState> {
  const hit = userStates.get(id);
  if (hit && hit.until > Date.now()) return hit.state;
  const [row] = await createDb(env.DB)
    .select({ companyId: users.company_id, role: users.usertype, validAfterMs: users.tokens_valid_after })
    .from(users)
    .where(eq(users.id, id));
  const state = row ? { companyId: row.companyId, role: row.role, validAfterMs: row.validAfterMs ?? 0 } : null;
  if (userStates.size >= MAX_VERIFIED) userStates.clear();
  userStates.set(id, { state, until: Date.now() + USER_RECHECK_MS });
  return state;
}

/** Drops this isolate's copy of the user's row after a change that ends tokens. */
export const forgetUser = (id: number) => void userStates.delete(id);

/** Whether a token of `user` issued at `issuedMs` still holds: the user exists in its company with that role and did not end its tokens since. */
export async function tokenHolds(env: Env, user: AuthUser, issuedMs: number): Promise<boolean> {
  const state = await userState(env, user.id);
  return !!state && state.companyId === user.companyId && state.role === user.role && issuedMs >= state.validAfterMs;
}

/** Verifies signature (HS256 only), expiry, claims and the user's current state; null when anything is off. */
export async function verifyToken(env: Env, token: string): Promise<{ user: AuthUser; issuedMs: number } | null> {
  let hit = verified.get(token);
  if (!(hit && hit.secret === env.JWT_SECRET && hit.expiresMs > Date.now())) {
    try {
      const { payload } = await jwtVerify(token, await secretKey(env), { algorithms: [ALGORITHM], requiredClaims: ["sub", "exp", "iat"] });
      const id = Number(payload.sub);
      const companyId = payload.cid;
      const role = payload.role as Role;
      if (!Number.isInteger(id) || typeof companyId !== "number" || !ROLES.includes(role)) return null;
      hit = { secret: env.JWT_SECRET, user: Object.freeze({ id, companyId, role }), issuedMs: payload.iat! * 1000, expiresMs: payload.exp! * 1000 };
      if (verified.size >= MAX_VERIFIED) verified.clear();
      verified.set(token, hit);
    } catch {
      return null;
    }
  }
  const { user, issuedMs } = hit;
  return (await tokenHolds(env, user, issuedMs)) ? { user, issuedMs } : null;
}
