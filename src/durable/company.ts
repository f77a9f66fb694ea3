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
import { eventTypeOf, eventsAfter, logEvent, wants } from "../worker/services/events";
import { enabledWebhooks, kickWebhooks } from "../worker/services/webhooks";

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

/** Events a reconnecting client gets at most; beyond that it refetches. */
const RESUME_LIMIT = 500;

export class CompanyCoordinator extends DurableObject<Env> {
  /** Tail of the queue of state changes: each waits for the previous one. */
  private changes: Promise<unknown> = Promise.resolve();
  private endpoints?: { id: number; event_types: string[] }[];
  private knownCompanyId?: number;

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
    const { userId, role } = ws.deserializeAttachment() as SocketAttachment;
    const companyId = await this.companyId();
    const missed = companyId === undefined ? [] : await eventsAfter(createDb(this.env.DB), companyId, after, { driverId: role === "driver" ? userId : undefined, limit: RESUME_LIMIT + 1 });
    for (const e of missed.slice(0, RESUME_LIMIT)) ws.send(JSON.stringify({ ...e.payload, event_id: e.id }));
    const last = missed.slice(0, RESUME_LIMIT).at(-1)?.id ?? after;
    ws.send(JSON.stringify({ type: "resumed", last_event_id: last, complete: missed.length <= RESUME_LIMIT }));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // 1005/1006 mean "no code" and may not be sent back; answer those with a normal closure.
    ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  /**
   * Logs an event (event log in D1: webhooks and `resume` read it), then sends
   * it with its `event_id` to the company's dispatchers and watchers, and to
   * the driver it concerns (drivers only ever get their own events), and
   * starts the delivery of the webhooks that want it. Not logged: `transient`
   * events (progress of a running process action), and driver positions
   * unless a webhook wants them (they are many, and `/driverposition` answers
   * the latest anyway). Returns the number of sockets reached.
   */
  async broadcast(event: LiveEvent, driverId?: number | null, options: { transient?: boolean } = {}): Promise<number> {
    const type = eventTypeOf(event);
    const companyId = await this.companyId();
    const endpoints = companyId === undefined ? [] : await this.webhookEndpoints(companyId);
    const logged = companyId !== undefined && !options.transient && (type !== "driver.position" || endpoints.some((w) => wants(w.event_types, type)));
    const eventId = logged ? await logEvent(createDb(this.env.DB), companyId, event, driverId ?? null) : undefined;
    const text = JSON.stringify(eventId === undefined ? event : { ...event, event_id: eventId });
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
    // A failed send loses nothing: the periodic sweep delivers whatever lies after an endpoint's cursor.
    if (logged) await kickWebhooks(this.env, endpoints, companyId, type).catch((err: unknown) => console.error("webhook kick failed", err));
    return sent;
  }

  /** The company's enabled webhook endpoints, cached until `webhooksChanged`. */
  private async webhookEndpoints(companyId: number) {
    this.endpoints ??= await enabledWebhooks(createDb(this.env.DB), companyId);
    return this.endpoints;
  }

  /** The webhook routes call this after every change of an endpoint. */
  async webhooksChanged(): Promise<void> {
    this.endpoints = undefined;
  }

  /**
   * The company this object serves: its name is `company:<id>`. Calls through
   * a stub carry the name; a woken hibernated socket may not, so it is kept
   * in storage as well. Undefined for an object not named after a company.
   */
  private async companyId(): Promise<number | undefined> {
    const named = Number(this.ctx.id.name?.split(":")[1]);
    if (Number.isInteger(named) && named > 0) {
      if (this.knownCompanyId !== named) await this.ctx.storage.put("companyId", named);
      return (this.knownCompanyId = named);
    }
    return (this.knownCompanyId ??= await this.ctx.storage.get<number>("companyId"));
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
    // Progress alone (the status stays) is shown live but not logged.
    await this.broadcast({ type: "process", process_id: processId, action, status: state[action].status, meta: state[action].meta }, null, { transient: state[action].status === record.status });
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
