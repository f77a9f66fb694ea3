/**
 * One Durable Object per company (named by the company id): it serialises the
 * company's state transitions, hosts routing-process status, and holds the
 * dispatchers' and drivers' websockets (hibernation API, so connections
 * survive eviction).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env, Role } from "../worker/env";

/** Live messages of contract.md §6. */
export type LiveEvent =
  | { type: "process"; process_id: string; action: string; status: string; meta: string }
  | { type: "route"; id: number; status: number; driver_id: number | null }
  | { type: "delivery"; id: number; status: number; route_id: number | null }
  | { type: "driverposition"; driver_id: number; position: { type: "Point"; coordinates: [number, number] }; timestamp: string }
  | { type: "eta"; route_id: number };

interface SocketAttachment {
  userId: number;
  role: Role;
}

const STAFF = "staff";
const driverTag = (id: number) => `driver:${id}`;

export class CompanyCoordinator extends DurableObject<Env> {
  /** Websocket upgrade; the worker authenticated the user and passes who it is. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a websocket upgrade", { status: 426 });
    const userId = Number(request.headers.get("X-User-Id"));
    const role = request.headers.get("X-User-Role") as Role;
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [role === "driver" ? driverTag(userId) : STAFF]);
    server.serializeAttachment({ userId, role } satisfies SocketAttachment);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      ws.send(JSON.stringify({ type: "error", message: "messages must be JSON" }));
      return;
    }
    if ((parsed as { type?: string })?.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    ws.close(code, reason);
  }

  /**
   * Sends an event to the company's dispatchers and watchers, and to the
   * driver it concerns (drivers only ever get their own events).
   * Returns the number of sockets reached.
   */
  async broadcast(event: LiveEvent, driverId?: number | null): Promise<number> {
    const text = JSON.stringify(event);
    const sockets = [...this.ctx.getWebSockets(STAFF), ...(driverId ? this.ctx.getWebSockets(driverTag(driverId)) : [])];
    let sent = 0;
    for (const ws of sockets) {
      try {
        ws.send(text);
        sent++;
      } catch {
        // A socket closing concurrently is not an error of the event.
      }
    }
    return sent;
  }

  /** Connected clients by role, for status pages and tests. */
  async connections(): Promise<{ staff: number; drivers: number }> {
    const all = this.ctx.getWebSockets();
    const staff = this.ctx.getWebSockets(STAFF).length;
    return { staff, drivers: all.length - staff };
  }
}
