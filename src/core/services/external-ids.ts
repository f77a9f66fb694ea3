/**
 * Orders and addresses keyed by the sending system's own id (`external_id`,
 * unique per company by index): an upsert finds the record by it and changes
 * it, or creates it. Two imports of the same id at once both find nothing;
 * the unique index lets one insert win and the other becomes its update, so
 * the id never names two records.
 */

/** Whether `err` (or one of its causes) is SQLite's unique violation on `column`. */
export function violatesUnique(err: unknown, column: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const failed = /UNIQUE constraint failed: ([\w., ]+)/.exec(e.message);
    if (failed) return failed[1].split(",").some((c) => c.trim().split(".").pop() === column);
  }
  return false;
}

/** Creates or changes the record with the external id: `find` answers its id, if any. */
export async function upsertByExternalId<T>(find: () => Promise<number | undefined>, create: () => Promise<T>, update: (id: number) => Promise<T>): Promise<{ written: T; created: boolean }> {
  const found = await find();
  if (found !== undefined) return { written: await update(found), created: false };
  try {
    return { written: await create(), created: true };
  } catch (err) {
    // Another request created it between the look and the insert: this one changes it.
    const raced = violatesUnique(err, "external_id") ? await find() : undefined;
    if (raced === undefined) throw err;
    return { written: await update(raced), created: false };
  }
}
