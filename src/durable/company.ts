/**
 * One Durable Object per company (named by the company id): it serialises the
 * company's state transitions, hosts routing-process status, and holds the
 * dispatchers' and drivers' websockets (hibernation API, so connections
 * survive eviction).
 */
import { DurableObject } from "cloudflare:workers";
import { createDb } from "../worker/db/client";
import type { Env, Role, RoutingJob, RoutingMergeJob } from "../worker/env";
import { RouteStatus } from "../worker/domain/states";
import { formatDateTime } from "../worker/lib/time";
import { type LifecycleOp, type LifecycleOutcome, applyLifecycleOp, updateEtas } from "../worker/services/route-lifecycle";
import { type PublishedEvent, eventTypeOf, eventsAfter, logEvent } from "../worker/services/events";
import { enabledWebhooks, kickWebhooks } from "../worker/services/webhooks";
import { type AttemptKind, type AttemptOutcome, type AttemptSubjects, type AttemptVerdict, LoginThrottle } from "./login-throttle";

/** How often ETAs of routes on the way are recomputed. */
const ETA_REFRESH_MS = 5 * 60_000;
/** Final process records are kept this many days unless PROCESS_RETENTION_DAYS says otherwise. */
const DEFAULT_RETENTION_DAYS = 30;
/** Pruning runs at most this often while nothing is overdue (expiries close together share one run). */
const PRUNE_SPACING_MS = 60 * 60_000;
/** Expired records deleted per alarm run; a backlog continues a second later. */
const PRUNE_BATCH = 200;
const DAY_MS = 86_400_000;

/** Storage keys (src/durable/README.md lists them). */
const ETA_DUE = "due:eta";
const PRUNE_DUE = "due:prune";
const processKey = (pid: string) => `process:${pid}`;
const ownerKey = (pid: string) => `process:${pid}:owner`;
const finishedAtKey = (pid: string) => `process:${pid}:finished`;
const watchKey = (pid: string) => `watch:${pid}`;
const partsKey = (pid: string) => `parts:${pid}`;
/** A part's initial tours (`:initial`) and its improved tours (`:result`). */
const partPrefix = (pid: string) => `part:${pid}:`;
const partKey = (pid: string, id: number, what: "initial" | "result") => `${partPrefix(pid)}${id}:${what}`;
/** Objects of a plan's parts in the UPLOADS bucket. */
export const fanOutPrefix = (companyId: number, pid: string) => `fanout/${companyId}/${pid}/`;
/** Index of final processes by the time they became final: zero-padded, so keys sort by time. */
const finishedIndexKey = (at: number, pid: string) => `finished:${String(at).padStart(15, "0")}:${pid}`;

/** Live messages of contract.md §6. */
export type LiveEvent =
  | { type: "process"; process_id: string; action: string; status: string; meta: string; link: string }
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

const isFinal = (status: ProcessStatus) => status === "finished" || status === "failed";

/**
 * The watchdog of a process that is not final yet: the job to queue again,
 * the time by which the process should be final, and how long the latest
 * run was given (a re-run gets as long again before it is declared failed).
 */
interface Watch {
  job: RoutingJob;
  deadline: number;
  window: number;
  reruns: number;
}

/** Tours as job ids per vehicle (the solver's `InitialTour`). */
export type PartTours = { vehicleId: string; jobIds: string[] }[];

/** One part of a big plan: its tours in the first solution and the vehicles it may use. */
export interface FanOutPart {
  id: number;
  initial: PartTours;
  vehicleIds: string[];
}

/**
 * A big plan improved in parts by several consumers: the run (claim) that
 * split it, which parts are in, and when to merge without the missing ones.
 */
interface Parts {
  attempt: string;
  job: RoutingMergeJob;
  total: number;
  done: number[];
  deadline: number;
  /** The merge job was sent: later results are ignored. */
  merging: boolean;
  /** The process's progress when no part is in, and when all are. */
  progress: [number, number];
}

/** How a plan's parts are to be collected (`startParts`). */
export interface PartsPlan {
  /** When to merge without the parts still missing. */
  deadline: number;
  /** The watchdog's new deadline for the whole process (after the merge's final pass). */
  finalBy: number;
  /** The job that merges the parts. */
  job: RoutingMergeJob;
  /** Progress of the process with none and with all parts in. */
  progress: [number, number];
}

/** A fresh action record: progress 1 when it is already done or skipped, 0 otherwise. */
export const processRecord = (status: ProcessStatus, extra: Partial<ProcessRecord> = {}): ProcessRecord => ({
  status,
  link: "",
  vague_addresses: [],
  meta: JSON.stringify({ progress: status === "finished" || status === "skipped" ? 1 : 0 }),
  ...extra,
});

const finishedAtOf = (indexKey: string) => Number(indexKey.split(":")[1]);

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
      for (const published of outcome.events) await this.broadcast(published);
      // A route went on the way: keep its ETAs fresh while any route is on the way.
      if (outcome.events.some(({ event }) => event.type === "route" && event.status === RouteStatus.ontheway)) await this.scheduleEtaRefresh(op.company.id);
    }
    return outcome;
  }

  private async scheduleEtaRefresh(companyId: number): Promise<void> {
    await this.ctx.storage.put("companyId", companyId);
    if ((await this.ctx.storage.get<number>(ETA_DUE)) === undefined) {
      await this.ctx.storage.put(ETA_DUE, Date.now() + ETA_REFRESH_MS);
      await this.arm();
    }
  }

  /**
   * The object has one alarm; it serves every due time kept in storage:
   * process deadlines (`watch:*`), the deadlines of plans in parts
   * (`parts:*`), the ETA refresh (`due:eta`) and pruning (`due:prune`).
   * Sets it to the earliest of them.
   */
  private async arm(): Promise<void> {
    const watches = await this.ctx.storage.list<Watch>({ prefix: "watch:" });
    const parts = await this.ctx.storage.list<Parts>({ prefix: "parts:" });
    const due = [
      await this.ctx.storage.get<number>(ETA_DUE),
      await this.ctx.storage.get<number>(PRUNE_DUE),
      ...[...watches.values()].map((w) => w.deadline),
      ...[...parts.values()].filter((p) => !p.merging).map((p) => p.deadline),
    ];
    const times = due.filter((t): t is number => t !== undefined);
    if (!times.length) return; // a stale alarm finds nothing due and sets none
    const next = Math.min(...times);
    if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }

  /** Whatever is due: overdue processes, plans in parts, the ETA refresh, pruning; then the alarm for the next due time. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    await this.checkDeadlines(now);
    await this.checkParts(now);
    await this.refreshEtas(now);
    await this.prune(now);
    await this.arm();
  }

  /**
   * Periodic ETA refresh of the routes on the way (from the drivers' latest
   * positions); stops when none is left. While it is on, every alarm run
   * refreshes (an earlier one for another due time just refreshes early).
   */
  private async refreshEtas(now: number): Promise<void> {
    const due = await this.ctx.storage.get<number>(ETA_DUE);
    const companyId = await this.ctx.storage.get<number>("companyId");
    if (due === undefined || companyId === undefined) return;
    const refreshed = await updateEtas(this.env, createDb(this.env.DB), companyId);
    for (const published of refreshed.events) await this.broadcast(published);
    if (refreshed.routes.length) await this.ctx.storage.put(ETA_DUE, now + ETA_REFRESH_MS);
    else await this.ctx.storage.delete(ETA_DUE);
  }

  /**
   * The watchdog: a process not final by its deadline is queued again once
   * (its stale claim released so the new run may take over), and when the
   * re-run misses its deadline too, it is marked failed.
   */
  private async checkDeadlines(now: number): Promise<void> {
    const watches = await this.ctx.storage.list<Watch>({ prefix: "watch:" });
    for (const [key, watch] of watches) {
      if (watch.deadline > now) continue;
      const pid = key.slice("watch:".length);
      const state = await this.getProcess(pid);
      if (!state || isFinal(state.final.status)) {
        await this.ctx.storage.delete(key);
        continue;
      }
      const overdue = formatDateTime(watch.deadline);
      if (watch.reruns === 0) {
        // Release the stale claim before the job can arrive; count the re-run only once it is sent (a failed send retries the alarm).
        await this.ctx.storage.delete(ownerKey(pid));
        await this.env.ROUTING_QUEUE.send(watch.job);
        await this.ctx.storage.put(key, { ...watch, reruns: 1, deadline: now + watch.window });
        await this.updateProcess(pid, "final", { meta: { watchdog: `No result by ${overdue}: the job was queued again` } });
      } else {
        await this.failProcess(pid, `No result by ${overdue}, also after queueing the job again: the routing consumer stopped or ran out of time`);
      }
    }
  }

  /** Deletes final process records older than the retention period (PROCESS_RETENTION_DAYS, default 30). */
  private async prune(now: number): Promise<void> {
    const due = await this.ctx.storage.get<number>(PRUNE_DUE);
    if (due === undefined || due > now) return;
    const retention = this.retentionMs();
    const expired = await this.ctx.storage.list<string>({ prefix: "finished:", end: finishedIndexKey(now - retention, ""), limit: PRUNE_BATCH });
    for (const [key, pid] of expired) {
      // A process opened again (batch routing of an upload) left an outdated index entry: only the entry goes.
      if ((await this.ctx.storage.get<number>(finishedAtKey(pid))) === finishedAtOf(key)) {
        await this.ctx.storage.delete([processKey(pid), ownerKey(pid), finishedAtKey(pid), watchKey(pid)]);
      }
      await this.ctx.storage.delete(key);
    }
    const [oldest] = (await this.ctx.storage.list<string>({ prefix: "finished:", limit: 1 })).keys();
    if (oldest === undefined) {
      await this.ctx.storage.delete(PRUNE_DUE);
      return;
    }
    const expires = finishedAtOf(oldest) + retention;
    await this.ctx.storage.put(PRUNE_DUE, expires <= now ? now + 1_000 : Math.max(expires, now + PRUNE_SPACING_MS));
  }

  private retentionMs(): number {
    const days = Number(this.env.PROCESS_RETENTION_DAYS);
    return (Number.isFinite(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS) * DAY_MS;
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
   * Sends an event to the company's dispatchers and watchers, and to the
   * driver it concerns (drivers only ever get their own events), with its
   * `event_id` when it is in the event log, and then starts a delivery run of
   * each webhook that wants a logged event. Logging is not done here: the
   * change that causes an event inserts it in its own D1 batch
   * (`eventInsert`), and a process status change (DO storage, no D1 change)
   * is logged by `updateProcess`. Returns the number of sockets reached.
   */
  async broadcast({ event, driverId, eventId }: PublishedEvent): Promise<number> {
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
    const companyId = await this.companyId();
    // A failed send loses nothing: the periodic sweep delivers whatever lies after an endpoint's cursor.
    if (eventId !== undefined && companyId !== undefined) {
      await kickWebhooks(this.env, await this.webhookEndpoints(companyId), companyId, eventTypeOf(event)).catch((err: unknown) => console.error("webhook kick failed", err));
    }
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

  /**
   * Registers a new process with the status of each action; durable, so it
   * survives eviction. `watch`: the queue job that runs it and the time by
   * which it should be final; the watchdog re-runs or fails it after that.
   */
  async createProcess(processId: string, state: ProcessState, watch?: { job: RoutingJob; deadline: number }): Promise<void> {
    await this.ctx.storage.put(processKey(processId), state);
    // A process started again (batch routing of an upload) may be claimed anew.
    await this.ctx.storage.delete([ownerKey(processId), finishedAtKey(processId)]);
    if (isFinal(state.final.status)) await this.settle(processId);
    else if (watch) {
      await this.ctx.storage.put(watchKey(processId), { ...watch, window: watch.deadline - Date.now(), reruns: 0 } satisfies Watch);
      await this.arm();
    }
  }

  async getProcess(processId: string): Promise<ProcessState | null> {
    return (await this.ctx.storage.get<ProcessState>(processKey(processId))) ?? null;
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
    const key = processKey(processId);
    const state = await this.ctx.storage.get<ProcessState>(key);
    if (!state) return null;
    const record = state[action];
    const wasFinal = isFinal(state.final.status);
    const meta = { ...(JSON.parse(record.meta) as Record<string, unknown>), ...update.meta };
    state[action] = {
      status: update.status ?? record.status,
      link: update.link ?? record.link,
      vague_addresses: update.vague_addresses ?? record.vague_addresses,
      meta: JSON.stringify(meta),
    };
    await this.ctx.storage.put(key, state);
    if (!wasFinal && isFinal(state.final.status)) await this.settle(processId);
    const { status, meta: text, link } = state[action];
    const event: LiveEvent = { type: "process", process_id: processId, action, status, meta: text, link };
    // Progress alone (the status stays) is shown live but not logged. A status change is logged after the storage
    // write: process state has no D1 change to share a batch with (src/durable/README.md, "Event log").
    const companyId = status === record.status ? undefined : await this.companyId();
    const eventId = companyId === undefined ? undefined : await logEvent(createDb(this.env.DB), companyId, event, null);
    await this.broadcast({ event, driverId: null, eventId });
    return state;
  }

  /** A process became final: no more watchdog; it is pruned after the retention period. */
  private async settle(processId: string): Promise<void> {
    const now = Date.now();
    await this.ctx.storage.delete(watchKey(processId));
    await this.dropParts(processId);
    await this.ctx.storage.put(finishedAtKey(processId), now);
    await this.ctx.storage.put(finishedIndexKey(now, processId), processId);
    if ((await this.ctx.storage.get<number>(PRUNE_DUE)) === undefined) await this.ctx.storage.put(PRUNE_DUE, now + this.retentionMs());
    await this.arm();
  }

  /**
   * Claims the routing of a process for one consumer: true when it was
   * waiting (or a previous attempt failed mid-way), false when another attempt
   * runs or it already finished. Makes queue redelivery harmless.
   * `deadline`: when this run should be done; the watchdog acts after it.
   */
  async claimRouting(processId: string, attempt: string, deadline?: number): Promise<boolean> {
    const state = await this.ctx.storage.get<ProcessState>(processKey(processId));
    if (!state || isFinal(state.final.status)) return false;
    const owner = await this.ctx.storage.get<{ attempt: string; since: number }>(ownerKey(processId));
    const now = Date.now();
    // A claim older than 15 minutes belongs to a consumer that died; take over.
    if (owner && owner.attempt !== attempt && now - owner.since < 15 * 60_000) return false;
    await this.ctx.storage.put(ownerKey(processId), { attempt, since: now });
    const watch = await this.ctx.storage.get<Watch>(watchKey(processId));
    if (watch && deadline !== undefined) {
      await this.ctx.storage.put(watchKey(processId), { ...watch, deadline, window: deadline - now });
      await this.arm();
    }
    return true;
  }

  /** Whether `attempt` still holds the claim (the watchdog may have handed the process to a re-run). */
  async holdsClaim(processId: string, attempt: string): Promise<boolean> {
    return (await this.ctx.storage.get<{ attempt: string }>(ownerKey(processId)))?.attempt === attempt;
  }

  /** A queue attempt threw and will be retried: the error stays on the `final` record as `last_error`. */
  async noteFailedAttempt(processId: string, error: string): Promise<void> {
    const state = await this.getProcess(processId);
    if (state && !isFinal(state.final.status)) await this.updateProcess(processId, "final", { meta: { last_error: error } });
  }

  /**
   * Marks a process that will not finish as failed: the action that was
   * running (else the first waiting one) and `final`, with the reason and the
   * last error of a queue attempt, if any. A final process stays as it is.
   */
  async failProcess(processId: string, reason: string): Promise<ProcessState | null> {
    const state = await this.getProcess(processId);
    if (!state || isFinal(state.final.status)) return state;
    const lastError = (JSON.parse(state.final.meta) as { last_error?: string }).last_error;
    const error = lastError ? `${reason}; last error: ${lastError}` : reason;
    const steps = PROCESS_ACTIONS.filter((a) => a !== "final");
    const stuck = steps.find((a) => state[a].status === "running") ?? steps.find((a) => state[a].status === "waiting");
    if (stuck) await this.updateProcess(processId, stuck, { status: "failed", meta: { error } });
    return this.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error } });
  }

  /**
   * A big plan goes to several consumers in parts (services/routing-fanout.ts):
   * the run holding the claim `attempt` registers the parts' initial tours
   * before it sends them. False when the claim was handed over or the
   * process is final.
   */
  async startParts(processId: string, attempt: string, parts: FanOutPart[], { deadline, finalBy, job, progress }: PartsPlan): Promise<boolean> {
    const state = await this.getProcess(processId);
    if (!state || isFinal(state.final.status) || !(await this.holdsClaim(processId, attempt))) return false;
    // Parts of an earlier run of the same process are void.
    await this.deleteKeys([...(await this.ctx.storage.list({ prefix: partPrefix(processId) })).keys()]);
    for (const part of parts) await this.ctx.storage.put(partKey(processId, part.id, "initial"), part);
    await this.ctx.storage.put(partsKey(processId), { attempt, job, total: parts.length, done: [], deadline, merging: false, progress } satisfies Parts);
    const watch = await this.ctx.storage.get<Watch>(watchKey(processId));
    if (watch) await this.ctx.storage.put(watchKey(processId), { ...watch, deadline: finalBy, window: finalBy - Date.now() });
    await this.arm();
    await this.updateProcess(processId, "routing", { meta: { progress: progress[0], parts_total: parts.length, parts_done: 0, parts_deadline: formatDateTime(deadline) } });
    return true;
  }

  /** Whether the result of this part is still wanted: its run holds the process, it is not in yet, nothing was merged, the process is not final (cancelled). */
  async partWanted(processId: string, attempt: string, partId: number): Promise<boolean> {
    const parts = await this.ctx.storage.get<Parts>(partsKey(processId));
    const state = await this.getProcess(processId);
    return !!parts && !!state && !isFinal(state.final.status) && parts.attempt === attempt && !parts.merging && !parts.done.includes(partId) && partId >= 0 && partId < parts.total;
  }

  /**
   * The improved tours of one part (null: the part gave up, it keeps its
   * initial tours). Idempotent by part id: a second result for a part, a
   * result of an older run, one after the merge began or for a final
   * process changes nothing and answers false. The last part in sends the
   * merge job.
   */
  async submitPart(processId: string, attempt: string, partId: number, tours: PartTours | null): Promise<boolean> {
    if (!(await this.partWanted(processId, attempt, partId))) return false;
    const parts = (await this.ctx.storage.get<Parts>(partsKey(processId)))!;
    if (tours) await this.ctx.storage.put(partKey(processId, partId, "result"), tours);
    parts.done.push(partId);
    await this.ctx.storage.put(partsKey(processId), parts);
    const [from, to] = parts.progress;
    const progress = Math.round((from + ((to - from) * parts.done.length) / parts.total) * 100) / 100;
    await this.updateProcess(processId, "routing", { meta: { progress, parts_done: parts.done.length } });
    if (parts.done.length === parts.total) await this.merge(processId);
    return true;
  }

  /** The parts and the results in, for the merge job of run `attempt` (null when another run holds the parts). */
  async partsForMerge(processId: string, attempt: string): Promise<{ parts: FanOutPart[]; results: { id: number; tours: PartTours }[] } | null> {
    const stored = await this.ctx.storage.get<Parts>(partsKey(processId));
    if (!stored || stored.attempt !== attempt) return null;
    const entries = await this.ctx.storage.list<FanOutPart | PartTours>({ prefix: partPrefix(processId) });
    const parts: FanOutPart[] = [];
    const results: { id: number; tours: PartTours }[] = [];
    for (const [key, value] of entries) {
      const [id, what] = key.slice(partPrefix(processId).length).split(":");
      if (what === "initial") parts.push(value as FanOutPart);
      else results.push({ id: Number(id), tours: value as PartTours });
    }
    return { parts, results };
  }

  /** Sends the merge job once (the flag is set before the send, and cleared again if it fails, so the alarm retries). */
  private async merge(processId: string): Promise<void> {
    const parts = await this.ctx.storage.get<Parts>(partsKey(processId));
    if (!parts || parts.merging) return;
    await this.ctx.storage.put(partsKey(processId), { ...parts, merging: true });
    try {
      await this.env.ROUTING_QUEUE.send(parts.job);
    } catch (err) {
      await this.ctx.storage.put(partsKey(processId), { ...parts, merging: false });
      throw err;
    }
  }

  /** Plans in parts past their deadline are merged without the missing parts (these keep their initial tours). */
  private async checkParts(now: number): Promise<void> {
    const all = await this.ctx.storage.list<Parts>({ prefix: "parts:" });
    for (const [key, parts] of all) {
      if (parts.merging || parts.deadline > now) continue;
      const pid = key.slice("parts:".length);
      await this.merge(pid);
      await this.updateProcess(pid, "routing", { meta: { parts_missing: parts.total - parts.done.length } });
    }
  }

  /** A final process needs its parts no more: their records here and their objects in R2 go. */
  private async dropParts(processId: string): Promise<void> {
    if ((await this.ctx.storage.get<Parts>(partsKey(processId))) === undefined) return;
    await this.deleteKeys([partsKey(processId), ...(await this.ctx.storage.list({ prefix: partPrefix(processId) })).keys()]);
    const companyId = await this.companyId();
    if (companyId === undefined) return;
    const listed = await this.env.UPLOADS.list({ prefix: fanOutPrefix(companyId, processId) });
    if (listed.objects.length) await this.env.UPLOADS.delete(listed.objects.map((o) => o.key));
  }

  /** Deletes keys in batches of 128, the most one call takes. */
  private async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 128) await this.ctx.storage.delete(keys.slice(i, i + 128));
  }

  /** Login throttle (login-throttle.ts): counts a password or code attempt before it runs, or refuses it. */
  beginAttempt(kind: AttemptKind, subjects: AttemptSubjects): AttemptVerdict {
    return this.loginThrottle().begin(kind, subjects);
  }

  /** Takes the counted failure back after a success ("succeeded") or a refusal for another reason ("void"). */
  endAttempt(kind: AttemptKind, subjects: AttemptSubjects, outcome: AttemptOutcome): void {
    this.loginThrottle().end(kind, subjects, outcome);
  }

  private throttle?: LoginThrottle;
  private loginThrottle(): LoginThrottle {
    return (this.throttle ??= new LoginThrottle(this.ctx.storage.sql));
  }

  /** Connected clients by role, for status pages and tests. */
  async connections(): Promise<{ staff: number; drivers: number }> {
    const all = this.ctx.getWebSockets();
    const staff = this.ctx.getWebSockets(STAFF).length;
    return { staff, drivers: all.length - staff };
  }
}
