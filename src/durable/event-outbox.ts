/**
 * The outbox of process events: a process status change and its event are
 * written in one storage transaction here (process state is not in D1, so
 * there is no D1 batch to share); the event is then logged to the D1 event
 * log, idempotent by the entry's id, and only then sent live and to the
 * webhooks. What a failure or a crash leaves in the outbox the alarm logs
 * later, in order.
 */
import { createDb } from "../core/db/client";
import type { LiveEvent } from "../shared/contract/live";
import { log } from "../core/lib/log";
import { logEventOnce } from "../core/services/events";
import { OUTBOX_DUE, arm } from "./alarms";
import type { Host } from "./host";
import type { LiveChannel } from "./live";

/** How soon the alarm tries again what could not be logged. */
const OUTBOX_RETRY_MS = 10_000;

const OUTBOX_PREFIX = "outbox:";
/** The last sequence number given to an entry: keys sort in the order the events happened. */
const OUTBOX_SEQ = "outbox-seq";
const entryKey = (seq: number) => `${OUTBOX_PREFIX}${String(seq).padStart(12, "0")}`;

interface OutboxEntry {
  /** Unique over the log (`events.source_id`): logging the entry twice logs it once. */
  id: string;
  companyId: number;
  event: LiveEvent;
}

export class EventOutbox {
  /** The flush under way: one at a time, so no event is sent twice by two flushes. */
  private flushing?: Promise<void>;
  private again = false;

  constructor(
    private readonly host: Host,
    private readonly live: LiveChannel,
  ) {}

  /**
   * Writes `records` and the event in one storage transaction, with the alarm
   * set to log the event should the flush after it not happen.
   */
  async write(records: Record<string, unknown>, companyId: number, event: LiveEvent): Promise<void> {
    await this.host.storage.transaction(async (txn) => {
      const seq = ((await txn.get<number>(OUTBOX_SEQ)) ?? 0) + 1;
      const retryAt = (await txn.get<number>(OUTBOX_DUE)) ?? Date.now() + OUTBOX_RETRY_MS;
      await txn.put({ ...records, [entryKey(seq)]: { id: crypto.randomUUID(), companyId, event } satisfies OutboxEntry, [OUTBOX_SEQ]: seq, [OUTBOX_DUE]: retryAt });
      const alarm = await txn.getAlarm();
      if (alarm === null || alarm > retryAt) await txn.setAlarm(retryAt);
    });
  }

  /**
   * Logs the waiting events in order, each then leaves the outbox and is sent
   * live and to the webhooks with its `event_id`. Throws on the first that
   * cannot be logged: it and the ones after it wait for the alarm.
   */
  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      try {
        do {
          this.again = false;
          await this.drain();
        } while (this.again);
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  private async drain(): Promise<void> {
    const entries = await this.host.storage.list<OutboxEntry>({ prefix: OUTBOX_PREFIX });
    if (!entries.size) return;
    // A company moving to another shard logs nothing until it is there: the alarm tries again.
    if ((await this.host.placement()).readOnly) throw new Error("The company is moving to another shard");
    const db = createDb((await this.host.shardEnv()).DB);
    for (const [key, { id, companyId, event }] of entries) {
      const eventId = await logEventOnce(db, companyId, event, null, id);
      await this.host.storage.delete(key);
      await this.live.broadcast({ event, driverId: null, eventId });
    }
    if (entries.size && !(await this.host.storage.list({ prefix: OUTBOX_PREFIX, limit: 1 })).size) {
      await this.host.storage.delete(OUTBOX_DUE);
      await arm(this.host.storage);
    }
  }

  /** From the alarm: flush; what still fails waits for the next try. */
  async run(now: number): Promise<void> {
    if ((await this.host.storage.get<number>(OUTBOX_DUE)) === undefined) return;
    try {
      await this.flush();
    } catch (err) {
      log("error", "process events could not be logged; retrying", { error: err });
      await this.host.storage.put(OUTBOX_DUE, now + OUTBOX_RETRY_MS);
    }
  }
}
