/**
 * Bulk intake (`POST /delivery/bulk`): up to MAX_BULK_ITEMS deliveries with
 * their addresses in one request, written all or nothing (the first unusable
 * item is a 422 naming it, nothing stored) or, with `partial`, item by item
 * with a result for each. Items with an `external_id` the company has change
 * that delivery (services/delivery-import.ts). Items without a coordinate
 * are geocoded in the background: the request answers a process id at once
 * and the routing queue's consumer writes the items (a process like an
 * upload's, under the same watchdog), its results in the process record.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Company, Db } from "../context";
import { processRecord } from "../coordinator/processes";
import { processes } from "../db/schema";
import { d1Statement } from "../db/sql";
import type { Env } from "../env";
import { ApiError, unprocessable } from "../errors";
import type { RoutingJob } from "../queues";
import { type DeliveryDataItem, importDeliveries } from "./delivery-import";
import { companyStub } from "./live";
import { uploadKey } from "./process-records";
import { uploadDeadline } from "./routing/budget";
import { loadCompany } from "./company-lookup";

export const MAX_BULK_ITEMS = 1000;
/** The name of the items' field in requests and in the fields of refusals. */
const FIELD = "items";

export type BulkItem = DeliveryDataItem & { external_id?: string | null };

/** What became of one item: created or changed (by its external id) with its delivery id, or refused with the reason. */
export type BulkItemResult = { index: number; status: "created" | "updated"; id: number } | { index: number; status: "refused"; message: string; fields: string };

export interface BulkSummary {
  num_created: number;
  num_updated: number;
  num_refused: number;
  results: BulkItemResult[];
}

interface BulkParams {
  kind: "bulk";
  key: string;
  partial: boolean;
  /** Set in the transaction that wrote the items: a redelivered job does not write them again. */
  written?: boolean;
}

const hasCoordinate = (item: BulkItem) => item.location !== undefined || (item.lat !== undefined && item.lng !== undefined);

/** The request: written now when every item has a coordinate, else a background process (its id answered). */
export async function takeBulk(env: Env, db: Db, company: Company, userId: number, items: BulkItem[], partial: boolean, apiBase: string): Promise<{ written: BulkSummary } | { processId: string }> {
  if (company.location_id === null) throw unprocessable("The company has no depot to deliver from", FIELD);
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const key = item.external_id?.trim();
    if (!key) return;
    if (seen.has(key)) throw unprocessable(`external_id ${key} is given twice (items ${seen.get(key)} and ${i}): one item per order`, `${FIELD}.${i}.external_id`);
    seen.set(key, i);
  });
  if (items.every(hasCoordinate)) return { written: await writeBulk(env, company, company.location_id, items, partial) };

  const processId = crypto.randomUUID();
  const params: BulkParams = { kind: "bulk", key: uploadKey(company.id, processId, 0, "items.json"), partial };
  const job: RoutingJob = { processId, companyId: company.id, kind: "bulk", apiBase };
  try {
    await env.UPLOADS.put(params.key, JSON.stringify(items), { httpMetadata: { contentType: "application/json" } });
    await db.insert(processes).values({ id: processId, company_id: company.id, kind: "upload", params, created_by: userId });
    await companyStub(env, company.id).createProcess(
      processId,
      { import_deliveries: processRecord("waiting"), cluster_deliveries: processRecord("skipped"), routing: processRecord("skipped"), final: processRecord("waiting") },
      { job, deadline: uploadDeadline() },
    );
  } catch (err) {
    // Without a process record nothing would ever prune the stored items (the client got no process id).
    await env.UPLOADS.delete(params.key).catch(() => undefined);
    await db.delete(processes).where(and(eq(processes.company_id, company.id), eq(processes.id, processId))).catch(() => undefined);
    throw err;
  }
  await env.ROUTING_QUEUE.send(job);
  return { processId };
}

/** Writes the items: all or nothing (an ApiError naming the first unusable item), or each with its result (`partial`). */
async function writeBulk(env: Env, company: Company, depotId: number, items: BulkItem[], partial: boolean, alsoInBatch: D1PreparedStatement[] = []): Promise<BulkSummary> {
  const { results, vague } = await importDeliveries(env, company, depotId, items, partial ? "collect" : "fail", FIELD, alsoInBatch);
  const all: BulkItemResult[] = [
    ...results.map((r) => ({ index: r.index, status: r.created ? ("created" as const) : ("updated" as const), id: r.id })),
    ...vague.map((v) => ({ index: v.index, status: "refused" as const, message: v.message, fields: v.fields })),
  ].sort((a, b) => a.index - b.index);
  const count = (status: BulkItemResult["status"]) => all.filter((r) => r.status === status).length;
  return { num_created: count("created"), num_updated: count("updated"), num_refused: count("refused"), results: all };
}

/** Queue consumer of a bulk intake that needed geocoding: the items written, the results in `import_deliveries`. Idempotent per process. */
export async function runBulkIntake(env: Env, db: Db, { companyId, processId }: RoutingJob, attempt: string) {
  const coordinator = companyStub(env, companyId);
  if (!(await coordinator.claimRouting(processId, attempt, uploadDeadline()))) return;
  const [process] = await db.select().from(processes).where(and(eq(processes.company_id, companyId), eq(processes.id, processId)));
  const params = process?.params as BulkParams | undefined;
  if (!params || params.kind !== "bulk") return;
  // A redelivered job whose items are written already does not write them again (their results went with the first attempt).
  if (params.written) {
    await coordinator.updateProcess(processId, "import_deliveries", { status: "finished", meta: { progress: 1, note: "The items were written by an earlier attempt, whose results were lost" } });
    await coordinator.updateProcess(processId, "final", { status: "finished", meta: { progress: 1 } });
    return;
  }
  await coordinator.updateProcess(processId, "import_deliveries", { status: "running" });
  const object = await env.UPLOADS.get(params.key);
  const company = await loadCompany(db, companyId);
  const fail = async (message: string, fields = "") => {
    await coordinator.updateProcess(processId, "import_deliveries", { status: "failed", meta: { progress: 1, error: message, fields } });
    await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error: message } });
  };
  if (!object || company.location_id === null) return fail(object ? "The company has no depot to deliver from" : "The items of this request are gone");
  let summary: BulkSummary;
  try {
    const markWritten = d1Statement(env.DB, sql`update ${processes} set params = json_set(params, '$.written', json('true')) where ${processes.id} = ${processId}`);
    summary = await writeBulk(env, company, company.location_id, (await object.json()) as BulkItem[], params.partial, [markWritten]);
  } catch (err) {
    if (err instanceof ApiError) return fail(err.message, err.fields);
    throw err;
  }
  await coordinator.updateProcess(processId, "import_deliveries", { status: "finished", meta: { progress: 1, ...summary } });
  await coordinator.updateProcess(processId, "final", { status: "finished", meta: { progress: 1 } });
}
