/**
 * Spreadsheet uploads: deliveries only (imported at once, routed later with
 * `POST /batchrouting/<pid>`), or one step (stored in R2, then imported,
 * clustered and routed by the routing queue consumer, with a result
 * spreadsheet in R2 and an email with its link).
 */
import { and, asc, eq } from "drizzle-orm";
import { type RoutingOptions, prepareRouting, waitingRouting } from "./routing/request";
import type { RoutingJob } from "../queues";
import type { Company, Db } from "../context";
import { processRecord } from "../coordinator/processes";
import { addresses, deliveries, processes, routes, users } from "../db/schema";
import { type RowAddress, rowAddress, rowsFromSheet } from "../domain/upload-rows";
import type { RoutingParams } from "../domain/routing-plan";
import type { Env } from "../env";
import { ApiError, conflict, notFound, unprocessable } from "../errors";
import { csvCell } from "../lib/csv";
import { SHEET_LIMITS, SpreadsheetError, readSpreadsheet } from "../lib/spreadsheet";
import { type DeliveryDataItem, importDeliveries } from "./delivery-import";
import { companyStub } from "./live";
import { dispatchOutbox, outboxInsert } from "./outbox";
import { resultKey, uploadKey } from "./process-records";
import { runRouting } from "./routing/run";
import { routingDeadline, uploadDeadline } from "./routing/budget";
import { loadCompany } from "./company-lookup";

export const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
/** Files in one upload (their rows are read together). */
export const MAX_UPLOAD_FILES = 20;
const MAX_ROWS = SHEET_LIMITS.rows;

/** An unusable row, as `vague_addresses` of the process reports it: where, why, and its address as the file gives it. */
export type VagueRow = { file: string; row: number; message: string; fields: string } & RowAddress;

interface UploadFile {
  name: string;
  bytes: Uint8Array;
}

/** Rows of all files as delivery inputs, with where each came from. A file without data rows is a 422. */
async function readRows(files: UploadFile[], timeZone: string) {
  const items: DeliveryDataItem[] = [];
  const origin: { file: string; row: number }[] = [];
  const rejected: VagueRow[] = [];
  for (const file of files) {
    let sheet;
    try {
      sheet = await readSpreadsheet(file.name, file.bytes);
    } catch (err) {
      if (err instanceof SpreadsheetError) throw new ApiError(err.status, `${file.name}: ${err.message}`, "file[]");
      throw err;
    }
    const parsed = rowsFromSheet(sheet, timeZone);
    if (!parsed.rows.length && !parsed.rejected.length) throw unprocessable(`${file.name}: no data rows (the file is empty or has only a header)`, "file[]");
    rejected.push(...parsed.rejected.map((r) => ({ file: file.name, row: r.row, message: r.reason, fields: "", ...r.address })));
    for (const { row, tour, ...fields } of parsed.rows) {
      items.push({ ...fields, custom_tour: tour ?? null });
      origin.push({ file: file.name, row });
    }
  }
  if (items.length > MAX_ROWS) throw unprocessable(`At most ${MAX_ROWS} rows per upload`, "file[]");
  return { items, origin, rejected };
}

async function importRows(env: Env, company: Company, files: UploadFile[]) {
  if (company.location_id === null) throw unprocessable("The company has no depot to deliver from", "file[]");
  const { items, origin, rejected } = await readRows(files, company.timezone);
  const { ids, vague, updated } = await importDeliveries(env, company, company.location_id, items, "collect");
  const vagueRows: VagueRow[] = [...rejected, ...vague.map((v) => ({ ...origin[v.index], message: v.message, fields: v.fields.replace(/deliverydata\.\d+\./g, ""), ...rowAddress(items[v.index]) }))];
  return { ids, updated, vague: vagueRows, rows: items.length };
}

/** POST /upload/deliveryonly: the rows become deliveries now; routing comes later with /batchrouting. */
export async function uploadDeliveriesOnly(env: Env, db: Db, company: Company, userId: number, files: UploadFile[]) {
  const { ids, updated, vague, rows } = await importRows(env, company, files);
  const processId = crypto.randomUUID();
  await db.insert(processes).values({ id: processId, company_id: company.id, kind: "upload", params: { deliveryIds: ids }, created_by: userId });
  await companyStub(env, company.id).createProcess(processId, {
    import_deliveries: processRecord("finished", { vague_addresses: vague, meta: JSON.stringify({ progress: 1, rows, imported: ids.length, updated }) }),
    cluster_deliveries: processRecord("skipped"),
    routing: processRecord("skipped"),
    final: processRecord("finished"),
  });
  return { processId, ids, updated, vague };
}

/** POST /batchrouting/<pid>: routes the deliveries of an earlier deliveries-only upload, as the same process. */
export async function batchRouting(env: Env, db: Db, company: Company, processId: string, options: RoutingOptions, apiBase: string) {
  const [process] = await db.select().from(processes).where(and(eq(processes.company_id, company.id), eq(processes.id, processId)));
  if (!process) throw notFound("Process");
  const stored = process.params as { deliveryIds?: number[] } | null;
  if (process.kind !== "upload" || !stored?.deliveryIds) throw conflict("Only a deliveries-only upload can be batch-routed", "process_id");
  const state = await companyStub(env, company.id).getProcess(processId);
  if (!state || state.routing.status !== "skipped") throw conflict(`Routing of this upload is already ${state?.routing.status ?? "unknown"}`, "process_id");
  const { params } = await prepareRouting(env, db, company, { deliveryids: stored.deliveryIds }, options, "async");
  await db.update(processes).set({ params }).where(eq(processes.id, processId));
  const fresh = { ...state, cluster_deliveries: processRecord(options.preclustered ? "finished" : "skipped"), routing: waitingRouting(params), final: processRecord("waiting") };
  const job: RoutingJob = { processId, companyId: company.id, apiBase };
  await companyStub(env, company.id).createProcess(processId, fresh, { job, deadline: routingDeadline(env, params, params.timeBudgetMs) });
  await env.ROUTING_QUEUE.send(job);
  return fresh;
}

interface OneStepParams {
  kind: "onestep";
  files: { key: string; name: string }[];
  email: string;
  options: RoutingOptions;
}

/** POST /upload/onestep: files to R2, the process registered under the watchdog, the work queued. */
export async function uploadOneStep(env: Env, db: Db, company: Company, userId: number, files: UploadFile[], email: string | undefined, options: RoutingOptions, apiBase: string) {
  await readRows(files, company.timezone); // unreadable files and files without data rows are refused now, not in the background
  const processId = crypto.randomUUID();
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  const stored = files.map((f, i) => ({ key: uploadKey(company.id, processId, i, f.name), name: f.name }));
  const job: RoutingJob = { processId, companyId: company.id, kind: "upload", apiBase };
  try {
    // Every put settled before a failure is handled: one still in flight would store a file after the clean-up.
    const puts = await Promise.allSettled(files.map((f, i) => env.UPLOADS.put(stored[i].key, f.bytes)));
    for (const put of puts) if (put.status === "rejected") throw put.reason;
    const params: OneStepParams = { kind: "onestep", files: stored, email: email ?? user.email, options };
    await db.insert(processes).values({ id: processId, company_id: company.id, kind: "upload", params, created_by: userId });
    await companyStub(env, company.id).createProcess(
      processId,
      {
        import_deliveries: processRecord("waiting"),
        cluster_deliveries: processRecord(options.preclustered ? "waiting" : "skipped"),
        routing: processRecord("waiting"),
        final: processRecord("waiting"),
      },
      { job, deadline: uploadDeadline() },
    );
  } catch (err) {
    // Without a process record nothing would ever prune what was stored (the client got no process id).
    await env.UPLOADS.delete(stored.map((f) => f.key)).catch(() => undefined);
    await db.delete(processes).where(and(eq(processes.company_id, company.id), eq(processes.id, processId))).catch(() => undefined);
    throw err;
  }
  // From here the record's watchdog queues the job again if this message is lost.
  await env.ROUTING_QUEUE.send(job);
  return processId;
}

/** Queue consumer of a one-step upload: import, cluster, route, result spreadsheet, email. Idempotent per process. */
export async function runOneStepUpload(env: Env, db: Db, { companyId, processId, apiBase }: RoutingJob, attempt: string) {
  const coordinator = companyStub(env, companyId);
  if (!(await coordinator.claimRouting(processId, attempt, uploadDeadline()))) return;
  const [process] = await db.select().from(processes).where(and(eq(processes.company_id, companyId), eq(processes.id, processId)));
  const stored = process?.params as (OneStepParams | (RoutingParams & { upload: OneStepParams })) | undefined;
  if (!process || !stored) return;
  const upload = "kind" in stored ? stored : stored.upload;

  // A redelivered job that already imported continues with the stored routing parameters.
  if ("kind" in stored) {
    const company = await loadCompany(db, companyId);
    await coordinator.updateProcess(processId, "import_deliveries", { status: "running" });
    const files: UploadFile[] = [];
    for (const f of upload.files) {
      const object = await env.UPLOADS.get(f.key);
      if (object) files.push({ name: f.name, bytes: new Uint8Array(await object.arrayBuffer()) });
    }
    let imported;
    try {
      imported = await importRows(env, company, files);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      await coordinator.updateProcess(processId, "import_deliveries", { status: "failed", meta: { progress: 1, error } });
      await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error } });
      return;
    }
    await coordinator.updateProcess(processId, "import_deliveries", { status: "finished", vague_addresses: imported.vague, meta: { progress: 1, rows: imported.rows, imported: imported.ids.length, updated: imported.updated } });
    if (!imported.ids.length) {
      await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error: "No row of the upload could be imported" } });
      return;
    }
    if (upload.options.preclustered) await coordinator.updateProcess(processId, "cluster_deliveries", { status: "finished", meta: { progress: 1 } });
    const { params } = await prepareRouting(env, db, company, { deliveryids: imported.ids }, upload.options, "async");
    await db.update(processes).set({ params: { ...params, upload } }).where(eq(processes.id, processId));
  }

  const outcome = await runRouting(env, db, companyId, processId, attempt, apiBase);
  if (!outcome?.ok) return;
  const link = `${apiBase}/process/result/${processId}`;
  await env.UPLOADS.put(resultKey(companyId, processId), await resultCsv(db, companyId, processId), { httpMetadata: { contentType: "text/csv; charset=utf-8" } });
  await coordinator.updateProcess(processId, "final", { link });
  const [ids] = await db.batch([
    outboxInsert(db, companyId, [
      {
        channel: "email",
        to: upload.email,
        template: "upload_result",
        data: { process_id: processId, link, tours: outcome.routeIds.length, files: upload.files.map((f) => f.name).join(", ") },
      },
    ]),
  ]);
  await dispatchOutbox(env, companyId, ids);
}

/** The result spreadsheet: one line per delivery in driving order, tour by tour; cells through `csvCell` (no formula runs). */
async function resultCsv(db: Db, companyId: number, processId: string): Promise<string> {
  const rows = await db
    .select({
      tour: routes.custom_id,
      route_id: routes.id,
      orderindex: deliveries.orderindex,
      delivery_id: deliveries.id,
      custom_id: deliveries.custom_id,
      contactcompany: addresses.contactcompany,
      contactlastname: addresses.contactlastname,
      street: addresses.street,
      housenumber: addresses.housenumber,
      postalcode: addresses.postalcode,
      city: addresses.city,
      pdt_from: deliveries.pdt_from,
      pdt_to: deliveries.pdt_to,
      eta_from: deliveries.eta_from,
      eta_to: deliveries.eta_to,
      tdt_from: deliveries.tdt_from,
      tdt_to: deliveries.tdt_to,
    })
    .from(deliveries)
    .innerJoin(routes, eq(routes.id, deliveries.route_id))
    .leftJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .where(and(eq(routes.company_id, companyId), eq(routes.process_id, processId)))
    .orderBy(asc(routes.id), asc(deliveries.orderindex));
  const header = ["tour", "route_id", "orderindex", "delivery_id", "custom_id", "contactcompany", "contactlastname", "street", "housenumber", "postalcode", "city", "pdt_from", "pdt_to", "eta_from", "eta_to", "tdt_from", "tdt_to"] as const;
  return [header.join(","), ...rows.map((r) => header.map((h) => csvCell(r[h])).join(","))].join("\n") + "\n";
}

/** The result spreadsheet (CSV) of the company's one-step upload, or 404. */
export async function resultSpreadsheet(env: Env, db: Db, companyId: number, processId: string): Promise<string> {
  const [process] = await db.select({ id: processes.id }).from(processes).where(and(eq(processes.company_id, companyId), eq(processes.id, processId)));
  const object = process ? await env.UPLOADS.get(resultKey(companyId, processId)) : null;
  if (!object) throw notFound("Result spreadsheet");
  return object.text();
}
