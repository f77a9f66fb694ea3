/**
 * Where the page lives and who is logged in. The company slug is the first
 * path segment (`/<slug>/console`); the token stays in sessionStorage (one
 * browser tab), never in a URL.
 */

export interface Session {
  token: string;
  userId: number;
  role: string;
  /** Expiry in epoch milliseconds. */
  expires: number;
}

export const slug = location.pathname.split("/")[1] ?? "";

const key = (app: string) => `dispatch:${slug}:${app}:token`;

/** The claims of a JWT the service issued (`sub` user id, `role`, `exp`); null when unreadable. */
export function decodeToken(token: string): Session | null {
  try {
    const payload = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    const userId = Number(payload.sub);
    if (!Number.isInteger(userId) || typeof payload.exp !== "number") return null;
    return { token, userId, role: String(payload.role), expires: payload.exp * 1000 };
  } catch {
    return null;
  }
}

export function loadSession(app: string): Session | null {
  const token = sessionStorage.getItem(key(app));
  const session = token ? decodeToken(token) : null;
  return session && session.expires > Date.now() ? session : null;
}

export function saveSession(app: string, session: Session | null): void {
  if (session) sessionStorage.setItem(key(app), session.token);
  else sessionStorage.removeItem(key(app));
}
