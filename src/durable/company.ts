/**
 * One Durable Object per company (named by the company id): it serialises the
 * company's state transitions, hosts routing-process status, and holds the
 * dispatchers' and drivers' websockets (hibernation API, so connections
 * survive eviction).
 */
import { DurableObject } from "cloudflare:workers";
import { createDb } from "../worker/db/client";
import type { Env, Role } from "../worker/env";
import { RouteStatus } from "../worker/domain/states";
import { type LifecycleOp, type LifecycleOutcome, applyLifecycleOp, updateEtas } from "../worker/services/route-lifecycle";

/** How often ETAs of routes on the way are recomputed. */
const ETA_REFRESH_MS = 5 * 60_000;

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

/** The four actions of a routing or upload process (contract.md §6). */
export const PROCESS_ACTIONS = ["import_deliveries", "cluster_deliveries", "routing", "final"] as const;
export type ProcessAction = (typeof PROCESS_ACTIONS)[number];
export type ProcessStatus = "waiting" | "running" | "finished" | "failed" | "skipped";

export interface ProcessRecord {
  status: ProcessStatus;
  link: string;
  vague_addresses: Record<string, string | number | null>[];
  /** JSON text with at least `progress` (0..1), and `error` when failed. */
  meta: string;
}

export type ProcessState = Record<ProcessAction, ProcessRecord>;

/** A fresh action record: progress 1 when it is already done or skipped, 0 otherwise. */
export const processRecord = (status: ProcessStatus, extra: Partial<ProcessRecord> = {}): ProcessRecord => ({
  status,
  link: "",
  vague_addresses: [],
  meta: JSON.stringify({ progress: status === "finished" || status === "skipped" ? 1 : 0 }),
  ...extra,
});

const STAFF = "staff";
const driverTag = (id: number) => `driver:${id}`;

export class CompanyCoordinator extends DurableObject<Env> {
  /** Tail of the queue of state changes: each waits for the previous one. */
  private changes: Promise<unknown> = Promise.resolve();

  /**
   * Applies a route or delivery state change, one at a time per company:
   * the change awaits D1, which would otherwise let calls interleave between
   * its check and its write. Then tells the live channel.
   */
  async applyChange(op: LifecycleOp): Promise<LifecycleOutcome> {
    const run = this.changes.then(() => applyLifecycleOp(this.env, createDb(this.env.DB), op));
    this.changes = run.catch(() => undefined);
    const outcome = await run;
    if (outcome.ok) {
      for (const { event, driverId } of outcome.events) await this.broadcast(event, driverId);
      // A route went on the way: keep its ETAs fresh while any route is on the way.
      if (outcome.events.some(({ event }) => event.type === "route" && event.status === RouteStatus.ontheway)) await this.scheduleEtaRefresh(op.company.id);
    }
    return outcome;
  }

  private async scheduleEtaRefresh(companyId: number): Promise<void> {
    await this.ctx.storage.put("companyId", companyId);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + ETA_REFRESH_MS);
  }

  /** Periodic ETA refresh of the routes on the way (from the drivers' latest positions); stops when none is left. */
  override async alarm(): Promise<void> {
    const companyId = await this.ctx.storage.get<number>("companyId");
    if (companyId === undefined) return;
    const refreshed = await updateEtas(this.env, createDb(this.env.DB), companyId);
    for (const r of refreshed) await this.broadcast({ type: "eta", route_id: r.route_id }, r.driver_id);
    if (refreshed.length) await this.ctx.storage.setAlarm(Date.now() + ETA_REFRESH_MS);
  }

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
    // 1005/1006 mean "no code" and may not be sent back; answer those with a normal closure.
    ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
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

  /** Registers a new process with the status of each action; durable, so it survives eviction. */
  async createProcess(processId: string, state: ProcessState): Promise<void> {
    await this.ctx.storage.put(`process:${processId}`, state);
    // A process started again (batch routing of an upload) may be claimed anew.
    await this.ctx.storage.delete(`process:${processId}:owner`);
  }

  async getProcess(processId: string): Promise<ProcessState | null> {
    return (await this.ctx.storage.get<ProcessState>(`process:${processId}`)) ?? null;
  }

  /**
   * Updates one action of a process and tells the company's live channel.
   * `meta` fields are merged into the action's meta JSON. Calls are
   * serialised by the object, so concurrent updates never lose one another.
   */
  async updateProcess(
    processId: string,
    action: ProcessAction,
    update: { status?: ProcessStatus; link?: string; meta?: Record<string, unknown>; vague_addresses?: ProcessRecord["vague_addresses"] },
  ): Promise<ProcessState | null> {
    const key = `process:${processId}`;
    const state = await this.ctx.storage.get<ProcessState>(key);
    if (!state) return null;
    const record = state[action];
    const meta = { ...(JSON.parse(record.meta) as Record<string, unknown>), ...update.meta };
    state[action] = {
      status: update.status ?? record.status,
      link: update.link ?? record.link,
      vague_addresses: update.vague_addresses ?? record.vague_addresses,
      meta: JSON.stringify(meta),
    };
    await this.ctx.storage.put(key, state);
    await this.broadcast({ type: "process", process_id: processId, action, status: state[action].status, meta: state[action].meta });
    return state;
  }

  /**
   * Claims the routing of a process for one consumer: true when it was
   * waiting (or a previous attempt failed mid-way), false when another attempt
   * runs or it already finished. Makes queue redelivery harmless.
   */
  async claimRouting(processId: string, attempt: string): Promise<boolean> {
    const key = `process:${processId}`;
    const state = await this.ctx.storage.get<ProcessState>(key);
    if (!state || state.final.status === "finished" || state.final.status === "failed") return false;
    const owner = await this.ctx.storage.get<{ attempt: string; since: number }>(`${key}:owner`);
    // A claim older than 15 minutes belongs to a consumer that died; take over.
    if (owner && owner.attempt !== attempt && Date.now() - owner.since < 15 * 60_000) return false;
    await this.ctx.storage.put(`${key}:owner`, { attempt, since: Date.now() });
    return true;
  }

  /** Connected clients by role, for status pages and tests. */
  async connections(): Promise<{ staff: number; drivers: number }> {
    const all = this.ctx.getWebSockets();
    const staff = this.ctx.getWebSockets(STAFF).length;
    return { staff, drivers: all.length - staff };
  }
}
