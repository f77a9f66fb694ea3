import { SignJWT, jwtVerify } from "jose";
import type { AuthUser, Env, Role } from "../env";

const ALGORITHM = "HS256";
const ROLES: Role[] = ["dispatcher", "watcher", "driver"];

const secretKey = (env: Env) => new TextEncoder().encode(env.JWT_SECRET);

export async function issueToken(env: Env, user: AuthUser): Promise<string> {
  const ttl = Number(env.TOKEN_TTL_SECONDS ?? 86400) || 86400;
  return new SignJWT({ cid: user.companyId, role: user.role })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setSubject(String(user.id))
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(secretKey(env));
}

/** Verifies signature (HS256 only), expiry and claims; null when anything is off. */
export async function verifyToken(env: Env, token: string): Promise<AuthUser | null> {
  try {
    const { payload } = await jwtVerify(token, secretKey(env), { algorithms: [ALGORITHM], requiredClaims: ["sub", "exp", "iat"] });
    const id = Number(payload.sub);
    const companyId = payload.cid;
    const role = payload.role as Role;
    if (!Number.isInteger(id) || typeof companyId !== "number" || !ROLES.includes(role)) return null;
    return { id, companyId, role };
  } catch {
    return null;
  }
}
