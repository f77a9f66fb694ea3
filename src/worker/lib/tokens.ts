import { SignJWT, jwtVerify } from "jose";
import type { AuthUser, Env, Role } from "../env";

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
const verified = new Map<string, { secret: string; user: AuthUser; expiresMs: number }>();
const MAX_VERIFIED = 5000;

/** Verifies signature (HS256 only), expiry and claims; null when anything is off. */
export async function verifyToken(env: Env, token: string): Promise<AuthUser | null> {
  const hit = verified.get(token);
  if (hit && hit.secret === env.JWT_SECRET && hit.expiresMs > Date.now()) return hit.user;
  try {
    const { payload } = await jwtVerify(token, await secretKey(env), { algorithms: [ALGORITHM], requiredClaims: ["sub", "exp", "iat"] });
    const id = Number(payload.sub);
    const companyId = payload.cid;
    const role = payload.role as Role;
    if (!Number.isInteger(id) || typeof companyId !== "number" || !ROLES.includes(role)) return null;
    const user: AuthUser = Object.freeze({ id, companyId, role });
    if (verified.size >= MAX_VERIFIED) verified.clear();
    verified.set(token, { secret: env.JWT_SECRET, user, expiresMs: payload.exp! * 1000 });
    return user;
  } catch {
    return null;
  }
}
