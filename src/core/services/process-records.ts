/**
 * What a routing or upload process keeps outside its coordinator record
 * (durable/processes.ts): its D1 row (owner, kind, parameters) and, for a
 * one-step upload, the uploaded files and the result spreadsheet in R2. All
 * of it goes when the record is pruned, so neither grows without bound.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../context";
import { processes } from "../db/schema";
import type { Env } from "../env";

export const uploadKey = (companyId: number, processId: string, index: number, fileName: string) =>
  `${uploadPrefix(companyId, processId)}${index}-${fileName.replace(/[^\w.-]+/g, "_")}`;
const uploadPrefix = (companyId: number, processId: string) => `uploads/${companyId}/${processId}/`;
export const resultKey = (companyId: number, processId: string) => `results/${companyId}/${processId}.csv`;

/** Ids per statement: D1 binds at most 100 parameters. */
const IDS_PER_STATEMENT = 50;
/** Keys per R2 delete call (its limit). */
const KEYS_PER_DELETE = 1000;

/**
 * Deletes the processes' R2 objects, then their D1 rows (objects first: a
 * failure leaves the row and the coordinator's record, and the next pruning
 * run repeats the whole, idempotently). The uploaded files' keys come from the
 * row's parameters, and only keys under the process's own prefix are taken.
 */
export async function forgetProcesses(env: Env, db: Db, companyId: number, processIds: string[]): Promise<void> {
  for (let i = 0; i < processIds.length; i += IDS_PER_STATEMENT) {
    const ids = processIds.slice(i, i + IDS_PER_STATEMENT);
    const ofCompany = and(eq(processes.company_id, companyId), inArray(processes.id, ids));
    const rows = await db.select({ id: processes.id, params: processes.params }).from(processes).where(ofCompany);
    const keys = rows.flatMap((row) => [resultKey(companyId, row.id), ...uploadedKeys(row.params).filter((key) => key.startsWith(uploadPrefix(companyId, row.id)))]);
    for (let k = 0; k < keys.length; k += KEYS_PER_DELETE) await env.UPLOADS.delete(keys.slice(k, k + KEYS_PER_DELETE));
    if (rows.length) await db.delete(processes).where(ofCompany);
  }
}

/** A one-step upload's files, in its parameters before routing (`files`) or after (`upload.files`). */
function uploadedKeys(params: unknown): string[] {
  const p = params as { files?: { key: string }[]; upload?: { files?: { key: string }[] } } | null;
  return (p?.files ?? p?.upload?.files ?? []).map((f) => f.key);
}
