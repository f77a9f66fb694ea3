/**
 * The object has one alarm; it serves every due time kept in storage:
 * process deadlines (`watch:*`), the deadlines of plans in parts
 * (`parts:*`), the ETA refresh (`due:eta`), pruning (`due:prune`) and the
 * retry of process events not yet logged (`due:outbox`).
 */

/** What the alarm reads of a `watch:*` record (processes.ts `Watch`) and a `parts:*` record (parts.ts `Parts`). */
type Deadline = { deadline: number };

export const ETA_DUE = "due:eta";
export const PRUNE_DUE = "due:prune";
export const OUTBOX_DUE = "due:outbox";
export const WATCH_PREFIX = "watch:";
export const PARTS_PREFIX = "parts:";

/** Sets the alarm to the earliest due time in storage. */
export async function arm(storage: DurableObjectStorage): Promise<void> {
  const watches = await storage.list<Deadline>({ prefix: WATCH_PREFIX });
  const parts = await storage.list<Deadline & { merging: boolean }>({ prefix: PARTS_PREFIX });
  const due = [
    await storage.get<number>(ETA_DUE),
    await storage.get<number>(PRUNE_DUE),
    await storage.get<number>(OUTBOX_DUE),
    ...[...watches.values()].map((w) => w.deadline),
    ...[...parts.values()].filter((p) => !p.merging).map((p) => p.deadline),
  ];
  const times = due.filter((t): t is number => t !== undefined);
  if (!times.length) return; // a stale alarm finds nothing due and sets none
  const next = Math.min(...times);
  if ((await storage.getAlarm()) !== next) await storage.setAlarm(next);
}
