/**
 * Login, logout and expiry around a page. When the token expires (or the
 * service rejects it) the login form is shown above the page, which stays
 * mounted, so nothing typed there is lost; logging in again resumes it.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { type Api, createApi, login } from "./api";
import { type Session, decodeToken, loadSession, saveSession, slug } from "./session";

interface ShellProps {
  app: "console" | "driver";
  title: string;
  /** Roles that may use the page. */
  roles: string[];
  children: (session: Session, api: Api, logout: () => void) => ComponentChildren;
}

export function Shell({ app, title, roles, children }: ShellProps) {
  const [session, setSession] = useState<Session | null>(() => loadSession(app));
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    if (!session) return;
    const t = window.setTimeout(() => setExpired(true), Math.max(0, session.expires - Date.now()));
    return () => window.clearTimeout(t);
  }, [session]);

  const api = useMemo<Api | null>(() => {
    if (!session) return null;
    return createApi(session.token, () => setExpired(true));
  }, [session]);

  const loggedIn = (s: Session) => {
    saveSession(app, s);
    setExpired(false);
    setSession(s);
  };
  const logout = () => {
    saveSession(app, null);
    setExpired(false);
    setSession(null);
  };

  if (!slug || slug === "app") return <main class="login"><p role="alert">Open this page as /&lt;company&gt;/{app}.</p></main>;
  if (!session || !api) return <Login title={title} roles={roles} onLogin={loggedIn} />;
  return (
    <>
      {/* A new user starts afresh; the same user logging in again keeps the page. */}
      <div key={session.userId} class="app-root" inert={expired}>
        {children(session, api, logout)}
      </div>
      {expired && (
        <div class="overlay">
          <Login title={title} roles={roles} onLogin={loggedIn} message="Your session has expired. Please log in again." />
        </div>
      )}
    </>
  );
}

function Login({ title, roles, onLogin, message }: { title: string; roles: string[]; onLogin: (s: Session) => void; message?: string }) {
  const [error, setError] = useState(message ?? "");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      const { access_token } = await login(String(form.get("email")), String(form.get("password")));
      const s = decodeToken(access_token);
      if (!s) throw new Error("The service answered an unreadable token");
      if (!roles.includes(s.role)) throw new Error(`This page is for ${roles.join(" and ")} accounts.`);
      onLogin(s);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form class="login-form" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">{title}</h1>
        <p class="muted">{slug}</p>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>
          {busy ? "Logging in…" : "Log in"}
        </button>
      </form>
    </main>
  );
}

/** The connection indicator: text plus a shape, not colour alone. */
export function ConnectionBadge({ state }: { state: "connecting" | "online" | "offline" }) {
  const text = { connecting: "Connecting…", online: "Live", offline: "Offline – reconnecting" }[state];
  return (
    <span class={`conn conn-${state}`} role="status" aria-live="polite" data-state={state}>
      <span aria-hidden="true">{state === "online" ? "●" : state === "connecting" ? "◌" : "○"}</span> {text}
    </span>
  );
}

/** A refusal or failure, announced as it appears; nothing when there is none. */
export function Alert({ text, class: extra = "" }: { text: string; class?: string }) {
  return text ? (
    <p role="alert" class={`error ${extra}`.trim()}>
      {text}
    </p>
  ) : null;
}
