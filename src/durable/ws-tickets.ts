/**
 * Tickets for the live channel (OWASP: no long-lived credential in a URL):
 * a signed-in client exchanges its access token for a random ticket that
 * opens one websocket within WS_TICKET_SECONDS. A URL ends up in proxies'
 * logs and browsers' history; a used or expired ticket found there opens
 * nothing. Kept hashed in the company's object, which redeems each once
 * (these calls never await, so two upgrades cannot both take one ticket).
 */
import { createHash, randomBytes } from "node:crypto";
import type { AuthUser } from "../core/context";
import type { WsTicketHolder } from "../core/coordinator/rpc";
import { WS_TICKET_SECONDS } from "../shared/contract/live";

const hash = (ticket: string) => createHash("sha256").update(ticket).digest("hex");

export class WsTickets {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS ws_tickets (hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL, role TEXT NOT NULL, company_id INTEGER NOT NULL, token_issued_ms INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
  }

  /** A new ticket for `user`, whose access token was issued at `tokenIssuedMs` (a revocation after that ends the socket as it ends the token). */
  issue(user: AuthUser, tokenIssuedMs: number, now = Date.now()): string {
    this.prune(now);
    const ticket = randomBytes(32).toString("base64url");
    this.sql.exec(
      `INSERT INTO ws_tickets (hash, user_id, role, company_id, token_issued_ms, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
      hash(ticket), user.id, user.role, user.companyId, tokenIssuedMs, now + WS_TICKET_SECONDS * 1000,
    );
    return ticket;
  }

  /** Who the ticket was issued to, once; null for an unknown, used or expired ticket. */
  redeem(ticket: string, now = Date.now()): WsTicketHolder | null {
    this.prune(now);
    const [row] = this.sql
      .exec<{ user_id: number; role: AuthUser["role"]; company_id: number; token_issued_ms: number }>(
        `DELETE FROM ws_tickets WHERE hash = ? AND expires_at > ? RETURNING user_id, role, company_id, token_issued_ms`,
        hash(ticket), now,
      )
      .toArray();
    return row ? { user: { id: row.user_id, role: row.role, companyId: row.company_id }, tokenIssuedMs: row.token_issued_ms } : null;
  }

  private prune(now: number) {
    this.sql.exec(`DELETE FROM ws_tickets WHERE expires_at <= ?`, now);
  }
}
