/**
 * Routing and upload processes: their status (durable in the object's
 * storage), the claim of one consumer run, the watchdog that re-runs or fails
 * a process not final by its deadline, and pruning of final records.
 */
import { CANCELLED, PROCESS_ACTIONS, type ProcessAction, type ProcessState, type ProcessUpdate, isFinal } from "../core/coordinator/processes";
import { createDb } from "../core/db/client";
import type { LiveEvent } from "../shared/contract/live";
import type { RoutingJob } from "../core/queues";
import { log } from "../core/lib/log";
import { formatDateTime } from "../core/lib/time";
import { forgetProcesses } from "../core/services/process-records";
import { PRUNE_DUE, WATCH_PREFIX, arm } from "./alarms";
import type { EventOutbox } from "./event-outbox";
import type { Host } from "./host";
import type { LiveChannel } from "./live";

/** Final process records are kept this many days unless PROCESS_RETENTION_DAYS says otherwise. */
const DEFAULT_RETENTION_DAYS = 30;
/** Pruning runs at most this often while nothing is overdue (expiries close together share one run). */
const PRUNE_SPACING_MS = 60 * 60_000;
/** Expired records deleted per alarm run; a backlog continues a second later. */
const PRUNE_BATCH = 200;
const DAY_MS = 86_400_000;

/** Storage keys (src/durable/README.md lists them). */
const processKey = (pid: string) => `process:${pid}`;
const ownerKey = (pid: string) => `process:${pid}:owner`;
const finishedAtKey = (pid: string) => `process:${pid}:finished`;
const watchKey = (pid: string) => `${WATCH_PREFIX}${pid}`;
/** Index of final processes by the time they became final: zero-padded, so keys sort by time. */
const finishedIndexKey = (at: number, pid: string) => `finished:${String(at).padStart(15, "0")}:${pid}`;
const finishedAtOf = (indexKey: string) => Number(indexKey.split(":")[1]);

/** The consumer run that claimed a process; `writing` once it writes its routes (no cancelling then). */
interface Owner {
  attempt: string;
  since: number;
  writing?: boolean;
}

/**
 * The watchdog of a process that is not final yet: the job to queue again,
 * the time by which the process should be final, and how long the latest
 * run was given (a re-run gets as long again before it is declared failed).
 */
export interface Watch {
  job: RoutingJob;
  deadline: number;
  window: number;
  reruns: number;
}

export class Processes {
  constructor(
    private readonly host: Host,
    private readonly live: LiveChannel,
    private readonly outbox: EventOutbox,
    /** Called once when a process becomes final (its parts go). */
    private readonly onFinal: (processId: string) => Promise<void>,
  ) {}

  private get storage() {
    return this.host.storage;
  }

  async create(processId: string, state: ProcessState, watch?: { job: RoutingJob; deadline: number }): Promise<void> {
    await this.storage.put(processKey(processId), state);
    // A process started again (batch routing of an upload) may be claimed anew.
    await this.storage.delete([ownerKey(processId), finishedAtKey(processId)]);
    if (isFinal(state.final.status)) await this.settle(processId);
    else if (watch) {
      await this.storage.put(watchKey(processId), { ...watch, window: watch.deadline - Date.now(), reruns: 0 } satisfies Watch);
      await arm(this.storage);
    }
  }

  async get(processId: string): Promise<ProcessState | null> {
    return (await this.storage.get<ProcessState>(processKey(processId))) ?? null;
  }

  /**
   * Updates one action of a process and tells the company's live channel.
   * `meta` fields are merged into the action's meta JSON. The read and the
   * write touch only the object's storage, so concurrent updates never lose
   * one another.
   */
  async update(processId: string, action: ProcessAction, update: ProcessUpdate): Promise<ProcessState | null> {
    const key = processKey(processId);
    const state = await this.storage.get<ProcessState>(key);
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
    const { status, meta: text, link } = state[action];
    const event: LiveEvent = { type: "process", process_id: processId, action, status, meta: text, link };
    // Progress alone (the status stays) is shown live but not logged. A status change goes into the outbox in the
    // storage transaction of the status, and from there into the event log (src/durable/README.md, "Event log").
    const companyId = status === record.status ? undefined : await this.host.companyId();
    if (companyId === undefined) await this.storage.put(key, state);
    else await this.outbox.write({ [key]: state }, companyId, event);
    if (!wasFinal && isFinal(state.final.status)) await this.settle(processId);
    if (companyId === undefined) await this.live.broadcast({ event, driverId: null });
    else await this.outbox.flush().catch((err: unknown) => log("error", "process event not logged yet; the alarm retries", { process_id: processId, error: err }));
    return state;
  }

  /** A process became final: no more watchdog; it is pruned after the retention period. */
  private async settle(processId: string): Promise<void> {
    const now = Date.now();
    await this.storage.delete(watchKey(processId));
    await this.onFinal(processId);
    await this.storage.put(finishedAtKey(processId), now);
    await this.storage.put(finishedIndexKey(now, processId), processId);
    if ((await this.storage.get<number>(PRUNE_DUE)) === undefined) await this.storage.put(PRUNE_DUE, now + this.retentionMs());
    await arm(this.storage);
  }

  /**
   * Claims the routing of a process for one consumer: true when it was
   * waiting (or a previous attempt failed mid-way), false when another attempt
   * runs or it already finished. Makes queue redelivery harmless.
   * `deadline`: when this run should be done; the watchdog acts after it.
   */
  async claim(processId: string, attempt: string, deadline?: number): Promise<boolean> {
    const state = await this.get(processId);
    if (!state || isFinal(state.final.status)) return false;
    const owner = await this.storage.get<Owner>(ownerKey(processId));
    const now = Date.now();
    // A claim older than 15 minutes belongs to a consumer that died; take over.
    if (owner && owner.attempt !== attempt && now - owner.since < 15 * 60_000) return false;
    await this.storage.put(ownerKey(processId), { attempt, since: now } satisfies Owner);
    const watch = await this.storage.get<Watch>(watchKey(processId));
    if (watch && deadline !== undefined) {
      await this.storage.put(watchKey(processId), { ...watch, deadline, window: deadline - now });
      await arm(this.storage);
    }
    return true;
  }

  async holdsClaim(processId: string, attempt: string): Promise<boolean> {
    return (await this.storage.get<Owner>(ownerKey(processId)))?.attempt === attempt;
  }

  /**
   * The run `attempt` is about to write its routes: true when it still holds
   * the claim of a process that is not final, and from then on the process
   * can no longer be cancelled (the write and a cancel never cross).
   */
  async beginWrite(processId: string, attempt: string): Promise<boolean> {
    const owner = await this.storage.get<Owner>(ownerKey(processId));
    const state = await this.get(processId);
    if (!state || isFinal(state.final.status) || owner?.attempt !== attempt) return false;
    await this.storage.put(ownerKey(processId), { ...owner, writing: true } satisfies Owner);
    return true;
  }

  /**
   * Cancels a process that is not final: its claim is released, so the run
   * stops at its next check and writes nothing, and the process fails with
   * the error `cancelled` (contract.md has no `cancelled` status), which also
   * drops its parts. Refused once final, or once its routes are being written.
   */
  async cancel(processId: string, by: { userId: number }): Promise<{ ok: true; state: ProcessState } | { ok: false; status: 404 | 409; message: string }> {
    const state = await this.get(processId);
    if (!state) return { ok: false, status: 404, message: "Process not found" };
    if (isFinal(state.final.status)) return { ok: false, status: 409, message: `The process is already ${state.final.status}` };
    if ((await this.storage.get<Owner>(ownerKey(processId)))?.writing) return { ok: false, status: 409, message: "The process is writing its routes; cancel the tours instead" };
    await this.storage.delete(ownerKey(processId));
    return { ok: true, state: (await this.end(processId, CANCELLED, { cancelled_by: by.userId }))! };
  }

  /** Moves the watchdog's deadline of a process (a plan split into parts is final only after the merge). */
  async extendWatch(processId: string, finalBy: number): Promise<void> {
    const watch = await this.storage.get<Watch>(watchKey(processId));
    if (watch) await this.storage.put(watchKey(processId), { ...watch, deadline: finalBy, window: finalBy - Date.now() });
  }

  async noteFailedAttempt(processId: string, error: string): Promise<void> {
    const state = await this.get(processId);
    if (state && !isFinal(state.final.status)) await this.update(processId, "final", { meta: { last_error: error } });
  }

  /**
   * Marks a process that will not finish as failed: the action that was
   * running (else the first waiting one) and `final`, with the reason and the
   * last error of a queue attempt, if any. A final process stays as it is.
   */
  async fail(processId: string, reason: string): Promise<ProcessState | null> {
    const state = await this.get(processId);
    if (!state || isFinal(state.final.status)) return state;
    const lastError = (JSON.parse(state.final.meta) as { last_error?: string }).last_error;
    return this.end(processId, lastError ? `${reason}; last error: ${lastError}` : reason);
  }

  /** The running (else first waiting) action and `final` become `failed` with `error`. */
  private async end(processId: string, error: string, extra: Record<string, unknown> = {}): Promise<ProcessState | null> {
    const state = await this.get(processId);
    if (!state) return null;
    const steps = PROCESS_ACTIONS.filter((a) => a !== "final");
    const stuck = steps.find((a) => state[a].status === "running") ?? steps.find((a) => state[a].status === "waiting");
    if (stuck) await this.update(processId, stuck, { status: "failed", meta: { error, ...extra } });
    return this.update(processId, "final", { status: "failed", meta: { progress: 1, error, ...extra } });
  }

  /**
   * The watchdog: a process not final by its deadline is queued again once
   * (its stale claim released so the new run may take over), and when the
   * re-run misses its deadline too, it is marked failed.
   */
  async checkDeadlines(now: number): Promise<void> {
    const watches = await this.storage.list<Watch>({ prefix: WATCH_PREFIX });
    for (const [key, watch] of watches) {
      if (watch.deadline > now) continue;
      const pid = key.slice(WATCH_PREFIX.length);
      const state = await this.get(pid);
      if (!state || isFinal(state.final.status)) {
        await this.storage.delete(key);
        continue;
      }
      const overdue = formatDateTime(watch.deadline);
      if (watch.reruns === 0) {
        // Release the stale claim before the job can arrive; count the re-run only once it is sent (a failed send retries the alarm).
        await this.storage.delete(ownerKey(pid));
        await this.host.env.ROUTING_QUEUE.send(watch.job);
        await this.storage.put(key, { ...watch, reruns: 1, deadline: now + watch.window });
        await this.update(pid, "final", { meta: { watchdog: `No result by ${overdue}: the job was queued again` } });
      } else {
        await this.fail(pid, `No result by ${overdue}, also after queueing the job again: the routing consumer stopped or ran out of time`);
      }
    }
  }

  /** Deletes final process records older than the retention period (PROCESS_RETENTION_DAYS, default 30), with their D1 rows and R2 objects. */
  async prune(now: number): Promise<void> {
    const due = await this.storage.get<number>(PRUNE_DUE);
    if (due === undefined || due > now) return;
    const retention = this.retentionMs();
    const expired = await this.storage.list<string>({ prefix: "finished:", end: finishedIndexKey(now - retention, ""), limit: PRUNE_BATCH });
    // A process opened again (batch routing of an upload) left an outdated index entry: only the entry goes.
    const ended: string[] = [];
    for (const [key, pid] of expired) if ((await this.storage.get<number>(finishedAtKey(pid))) === finishedAtOf(key)) ended.push(pid);
    const companyId = await this.host.companyId();
    if (ended.length && companyId !== undefined) {
      // Their D1 rows and R2 objects go first. While the company moves between shards, or when that
      // fails, the records stay and the next run (an hour on) tries again; the alarm's other work goes on.
      const retryLater = () => this.storage.put(PRUNE_DUE, now + PRUNE_SPACING_MS);
      if ((await this.host.placement()).readOnly) return retryLater();
      const env = await this.host.shardEnv();
      try {
        await forgetProcesses(env, createDb(env.DB), companyId, ended);
      } catch (err) {
        log("error", "final processes not pruned yet; the next run tries again", { company_id: companyId, processes: ended.length, error: err });
        return retryLater();
      }
    }
    await this.host.deleteKeys([...ended.flatMap((pid) => [processKey(pid), ownerKey(pid), finishedAtKey(pid), watchKey(pid)]), ...expired.keys()]);
    const [oldest] = (await this.storage.list<string>({ prefix: "finished:", limit: 1 })).keys();
    if (oldest === undefined) {
      await this.storage.delete(PRUNE_DUE);
      return;
    }
    const expires = finishedAtOf(oldest) + retention;
    await this.storage.put(PRUNE_DUE, expires <= now ? now + 1_000 : Math.max(expires, now + PRUNE_SPACING_MS));
  }

  private retentionMs(): number {
    const days = Number(this.host.env.PROCESS_RETENTION_DAYS);
    return (Number.isFinite(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS) * DAY_MS;
  }
}
