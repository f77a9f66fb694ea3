/**
 * The company's live channel: hibernatable websockets tagged `staff`
 * (dispatchers, watchers) or `driver:<id>`, `resume` from the event log, and
 * the kick of webhook delivery runs for logged events.
 */
import { createDb } from "../core/db/client";
import type { PublishedEvent } from "../core/coordinator/live";
import type { Role } from "../core/context";
import { tokenHolds } from "../core/lib/tokens";
import { eventTypeOf, eventsAfter } from "../core/services/events";
import { enabledWebhooks, kickWebhooks } from "../core/services/webhooks";
import { TOKEN_REVOKED } from "../shared/contract/live";
import type { Host } from "./host";

interface SocketAttachment {
  userId: number;
  role: Role;
  /** When the socket's token was issued (ms): a resume checks it against the user's `tokens_valid_after`. Absent on sockets accepted before it was kept. */
  issuedMs?: number;
}

const STAFF = "staff";
const driverTag = (id: number) => `driver:${id}`;

/** Events a reconnecting client gets at most; beyond that it refetches. */
const RESUME_LIMIT = 500;

export class LiveChannel {
  private endpoints?: { id: number; event_types: string[] }[];

  constructor(private readonly host: Host) {}

  /** Websocket upgrade; the worker authenticated the user and passes who it is. */
  accept(request: Request): Response {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a websocket upgrade", { status: 426 });
    const userId = Number(request.headers.get("X-User-Id"));
    const role = request.headers.get("X-User-Role") as Role;
    const issuedMs = Number(request.headers.get("X-Token-Issued"));
    const { 0: client, 1: server } = new WebSocketPair();
    this.host.ctx.acceptWebSocket(server, [role === "driver" ? driverTag(userId) : STAFF]);
    server.serializeAttachment({ userId, role, issuedMs } satisfies SocketAttachment);
    return new Response(null, { status: 101, webSocket: client });
  }

  async message(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    let parsed: { type?: string; after?: unknown };
    try {
      parsed = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      ws.send(JSON.stringify({ type: "error", message: "messages must be JSON" }));
      return;
    }
    if (parsed?.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
    else if (parsed?.type === "resume") await this.resume(ws, parsed.after);
  }

  /**
   * `{"type": "resume", "after": <event id>}`: the events the client missed,
   * in order (at most RESUME_LIMIT; `complete: false` says to refetch instead),
   * then `{"type": "resumed", "last_event_id", "complete"}`.
   */
  private async resume(ws: WebSocket, after: unknown): Promise<void> {
    if (typeof after !== "number" || !Number.isInteger(after) || after < 0) {
      ws.send(JSON.stringify({ type: "error", message: "resume needs after: the id of the last event received (an integer >= 0)" }));
      return;
    }
    const { userId, role, issuedMs } = ws.deserializeAttachment() as SocketAttachment;
    const companyId = await this.host.companyId();
    // The fallback where `endSessions` was not reached (another change path, a failed call): a socket outlives no revocation past its next resume.
    if (companyId === undefined || !(await tokenHolds(await this.host.shardEnv(), { id: userId, companyId, role }, issuedMs ?? 0))) {
      ws.close(TOKEN_REVOKED.code, TOKEN_REVOKED.reason);
      return;
    }
    const missed = companyId === undefined ? [] : await eventsAfter(createDb((await this.host.shardEnv()).DB), companyId, after, { driverId: role === "driver" ? userId : undefined, limit: RESUME_LIMIT + 1 });
    for (const e of missed.slice(0, RESUME_LIMIT)) ws.send(JSON.stringify({ ...e.payload, event_id: e.id }));
    const last = missed.slice(0, RESUME_LIMIT).at(-1)?.id ?? after;
    ws.send(JSON.stringify({ type: "resumed", last_event_id: last, complete: missed.length <= RESUME_LIMIT }));
  }

  close(ws: WebSocket, code: number, reason: string): void {
    // 1005/1006 mean "no code" and may not be sent back; answer those with a normal closure.
    ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  /**
   * Sends an event to the company's dispatchers and watchers, and to the
   * driver it concerns (drivers only ever get their own events), with its
   * `event_id` when it is in the event log, and then starts a delivery run of
   * each webhook that wants a logged event. Logging is not done here: the
   * change that causes an event inserts it in its own D1 batch
   * (`eventInsert`), and a process status change (DO storage, no D1 change)
   * is logged by the process concern. Returns the number of sockets reached.
   */
  async broadcast({ event, driverId, eventId }: PublishedEvent): Promise<number> {
    const text = JSON.stringify(eventId === undefined ? event : { ...event, event_id: eventId });
    const sockets = [...this.host.ctx.getWebSockets(STAFF), ...(driverId ? this.host.ctx.getWebSockets(driverTag(driverId)) : [])];
    let sent = 0;
    for (const ws of sockets) {
      try {
        ws.send(text);
        sent++;
      } catch {
        // A socket closing concurrently is not an error of the event.
      }
    }
    const companyId = await this.host.companyId();
    // A failed send loses nothing: the periodic sweep delivers whatever lies after an endpoint's cursor.
    if (eventId !== undefined && companyId !== undefined) {
      await kickWebhooks(this.host.env, await this.webhookEndpoints(companyId), companyId, eventTypeOf(event)).catch((err: unknown) => console.error("webhook kick failed", err));
    }
    return sent;
  }

  /** The company's enabled webhook endpoints, cached until `webhooksChanged`. */
  private async webhookEndpoints(companyId: number) {
    this.endpoints ??= await enabledWebhooks(createDb((await this.host.shardEnv()).DB), companyId);
    return this.endpoints;
  }

  /** Forget the cached endpoint list (after every change of an endpoint). */
  webhooksChanged(): void {
    this.endpoints = undefined;
  }

  /** Closes every socket of the user with TOKEN_REVOKED (its tokens just ended); returns how many. */
  endSessions(userId: number): number {
    const sockets = this.host.ctx.getWebSockets().filter((ws) => (ws.deserializeAttachment() as SocketAttachment | null)?.userId === userId);
    for (const ws of sockets) {
      try {
        ws.close(TOKEN_REVOKED.code, TOKEN_REVOKED.reason);
      } catch {
        // Already closing.
      }
    }
    return sockets.length;
  }

  /** Connected clients by role. */
  connections(): { staff: number; drivers: number } {
    const all = this.host.ctx.getWebSockets();
    const staff = this.host.ctx.getWebSockets(STAFF).length;
    return { staff, drivers: all.length - staff };
  }
}
