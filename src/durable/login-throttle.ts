/**
 * The login throttle of a company (OWASP Authentication Cheat Sheet): every
 * password or code attempt is counted against the account and against the
 * client's address before it runs, in the company's Durable Object, so the
 * count holds across isolates and parallel guesses cannot race past it (the
 * object runs one call at a time and these calls never await).
 *
 * An attempt counts as a failure from the start; a success takes it back
 * (and clears the account), so does an attempt that failed for another
 * reason. From the `free`-th failure on, the subject waits 1 s, 2 s, 4 s, ...
 * up to 15 minutes before its next attempt; attempts while it waits are
 * refused without being counted (hammering does not lengthen the wait, so the
 * owner is never locked out for good), and one failure is forgotten per 15
 * minutes without one. Unknown emails are counted exactly like known ones.
 */

import type { AttemptKind, AttemptOutcome, AttemptSubjects, AttemptVerdict } from "../core/coordinator/login-throttle";
export const THROTTLE = {
  /** Failures before the first wait: per account, and per address (several people may share one). */
  free: { account: 5, address: 10 },
  firstWaitMs: 1000,
  maxWaitMs: 15 * 60_000,
  /** One failure is forgotten per this time without a failure. */
  forgetMs: 15 * 60_000,
} as const;

type Scope = keyof typeof THROTTLE.free;

/** Wait after `failures` failures in a scope: none below `free`, then doubling from 1 s, at most 15 minutes. */
export function waitAfter(scope: Scope, failures: number): number {
  const over = failures - THROTTLE.free[scope];
  return over < 0 ? 0 : Math.min(THROTTLE.maxWaitMs, THROTTLE.firstWaitMs * 2 ** over);
}

interface Row {
  failures: number;
  last: number;
}

export class LoginThrottle {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS login_throttle (key TEXT PRIMARY KEY, failures INTEGER NOT NULL, last INTEGER NOT NULL, forget_at INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS login_throttle_forget ON login_throttle (forget_at)`);
  }

  /** Counts the attempt, or refuses it while a subject has to wait. */
  begin(kind: AttemptKind, subjects: AttemptSubjects, now = Date.now()): AttemptVerdict {
    this.sql.exec(`DELETE FROM login_throttle WHERE key IN (SELECT key FROM login_throttle WHERE forget_at < ? LIMIT 100)`, now);
    let wait = 0;
    let waitingFailures = 0;
    const counts: { key: string; failures: number }[] = [];
    for (const { scope, key } of this.scopes(kind, subjects)) {
      const row = this.row(key);
      const until = row ? row.last + waitAfter(scope, row.failures) : 0;
      if (row && until - now > wait) {
        wait = until - now;
        waitingFailures = row.failures;
      }
      counts.push({ key, failures: row ? Math.max(0, row.failures - Math.floor((now - row.last) / THROTTLE.forgetMs)) : 0 });
    }
    if (wait > 0) return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000), failures: waitingFailures };
    for (const { key, failures } of counts) this.store(key, failures + 1, now);
    return { allowed: true };
  }

  /** Takes the counted failure back: a success also clears the account (not the address, which other accounts share). */
  end(kind: AttemptKind, subjects: AttemptSubjects, outcome: AttemptOutcome, now = Date.now()): void {
    for (const { scope, key } of this.scopes(kind, subjects)) {
      const row = this.row(key);
      if (!row) continue;
      if (outcome === "succeeded" && scope === "account") this.sql.exec(`DELETE FROM login_throttle WHERE key = ?`, key);
      else this.store(key, Math.max(0, row.failures - 1), row.last, now);
    }
  }

  private scopes(kind: AttemptKind, { account, address }: AttemptSubjects): { scope: Scope; key: string }[] {
    return [
      { scope: "account", key: `${kind}:account:${account.toLowerCase()}` },
      { scope: "address", key: `${kind}:address:${address}` },
    ];
  }

  private row(key: string): Row | undefined {
    return this.sql.exec<{ failures: number; last: number }>(`SELECT failures, last FROM login_throttle WHERE key = ?`, key).toArray()[0];
  }

  private store(key: string, failures: number, last: number, now = last) {
    if (failures <= 0) {
      this.sql.exec(`DELETE FROM login_throttle WHERE key = ?`, key);
      return;
    }
    // Kept until every failure is forgotten (and any wait is over).
    const forgetAt = Math.max(last + failures * THROTTLE.forgetMs, now);
    this.sql.exec(`INSERT OR REPLACE INTO login_throttle (key, failures, last, forget_at) VALUES (?, ?, ?, ?)`, key, failures, last, forgetAt);
  }
}
