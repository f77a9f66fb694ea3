/**
 * Big plans improved in parts by several consumers
 * (src/core/services/routing/fan-out.ts): the object collects the parts'
 * results and sends one merge job; the merge itself runs in a consumer.
 */
import type { RoutingMergeJob } from "../core/queues";
import { type FanOutPart, type PartTours, type PartsPlan, fanOutPrefix } from "../core/coordinator/parts";
import { isFinal } from "../core/coordinator/processes";
import { formatDateTime } from "../core/lib/time";
import { PARTS_PREFIX, arm } from "./alarms";
import type { Host } from "./host";
import type { Processes } from "./processes";

const partsKey = (pid: string) => `${PARTS_PREFIX}${pid}`;
/** A part's initial tours (`:initial`) and its improved tours (`:result`). */
const partPrefix = (pid: string) => `part:${pid}:`;
const partKey = (pid: string, id: number, what: "initial" | "result") => `${partPrefix(pid)}${id}:${what}`;
/**
 * A big plan improved in parts by several consumers: the run (claim) that
 * split it, which parts are in, and when to merge without the missing ones.
 */
export interface Parts {
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

export class PlanParts {
  constructor(
    private readonly host: Host,
    private readonly processes: Processes,
  ) {}

  private get storage() {
    return this.host.storage;
  }

  /** Registers the parts of run `attempt`; false when the claim was handed over or the process is final. */
  async start(processId: string, attempt: string, parts: FanOutPart[], { deadline, finalBy, job, progress }: PartsPlan): Promise<boolean> {
    const state = await this.processes.get(processId);
    if (!state || isFinal(state.final.status) || !(await this.processes.holdsClaim(processId, attempt))) return false;
    // Parts of an earlier run of the same process are void.
    await this.host.deleteKeys([...(await this.storage.list({ prefix: partPrefix(processId) })).keys()]);
    for (const part of parts) await this.storage.put(partKey(processId, part.id, "initial"), part);
    await this.storage.put(partsKey(processId), { attempt, job, total: parts.length, done: [], deadline, merging: false, progress } satisfies Parts);
    await this.processes.extendWatch(processId, finalBy);
    await arm(this.storage);
    await this.processes.update(processId, "routing", { meta: { progress: progress[0], parts_total: parts.length, parts_done: 0, parts_deadline: formatDateTime(deadline) } });
    return true;
  }

  /** Whether the result of this part is still wanted: its run holds the process, it is not in yet, nothing was merged, the process is not final (cancelled). */
  async wanted(processId: string, attempt: string, partId: number): Promise<boolean> {
    const parts = await this.storage.get<Parts>(partsKey(processId));
    const state = await this.processes.get(processId);
    return !!parts && !!state && !isFinal(state.final.status) && parts.attempt === attempt && !parts.merging && !parts.done.includes(partId) && partId >= 0 && partId < parts.total;
  }

  /** Keeps one part's result (idempotent by part id); the last part in sends the merge job. */
  async submit(processId: string, attempt: string, partId: number, tours: PartTours | null): Promise<boolean> {
    if (!(await this.wanted(processId, attempt, partId))) return false;
    const parts = (await this.storage.get<Parts>(partsKey(processId)))!;
    if (tours) await this.storage.put(partKey(processId, partId, "result"), tours);
    parts.done.push(partId);
    await this.storage.put(partsKey(processId), parts);
    const [from, to] = parts.progress;
    const progress = Math.round((from + ((to - from) * parts.done.length) / parts.total) * 100) / 100;
    await this.processes.update(processId, "routing", { meta: { progress, parts_done: parts.done.length } });
    if (parts.done.length === parts.total) await this.merge(processId);
    return true;
  }

  /** The parts and the results in, for the merge job of run `attempt` (null when another run holds the parts). */
  async forMerge(processId: string, attempt: string): Promise<{ parts: FanOutPart[]; results: { id: number; tours: PartTours }[] } | null> {
    const stored = await this.storage.get<Parts>(partsKey(processId));
    if (!stored || stored.attempt !== attempt) return null;
    const entries = await this.storage.list<FanOutPart | PartTours>({ prefix: partPrefix(processId) });
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
    const parts = await this.storage.get<Parts>(partsKey(processId));
    if (!parts || parts.merging) return;
    await this.storage.put(partsKey(processId), { ...parts, merging: true });
    try {
      await this.host.env.ROUTING_QUEUE.send(parts.job);
    } catch (err) {
      await this.storage.put(partsKey(processId), { ...parts, merging: false });
      throw err;
    }
  }

  /** Plans in parts past their deadline are merged without the missing parts (these keep their initial tours). */
  async checkDeadlines(now: number): Promise<void> {
    const all = await this.storage.list<Parts>({ prefix: PARTS_PREFIX });
    for (const [key, parts] of all) {
      if (parts.merging || parts.deadline > now) continue;
      const pid = key.slice(PARTS_PREFIX.length);
      await this.merge(pid);
      await this.processes.update(pid, "routing", { meta: { parts_missing: parts.total - parts.done.length } });
    }
  }

  /** A final process needs its parts no more: their records here and their objects in R2 go. */
  async drop(processId: string): Promise<void> {
    if ((await this.storage.get<Parts>(partsKey(processId))) === undefined) return;
    await this.host.deleteKeys([partsKey(processId), ...(await this.storage.list({ prefix: partPrefix(processId) })).keys()]);
    const companyId = await this.host.companyId();
    if (companyId === undefined) return;
    const listed = await this.host.env.UPLOADS.list({ prefix: fanOutPrefix(companyId, processId) });
    if (listed.objects.length) await this.host.env.UPLOADS.delete(listed.objects.map((o) => o.key));
  }
}
