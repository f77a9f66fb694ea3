/** Spreadsheet uploads and batch routing (dispatch-api.md "Upload and batch routing"). */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError, unprocessable } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { BooleanQuery, apiRoute, jsonResponse } from "../openapi";
import { SHEET_LIMITS } from "../../core/lib/spreadsheet";
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES, batchRouting, resultSpreadsheet, uploadDeliveriesOnly, uploadOneStep } from "../../core/services/uploads";
import type { RoutingOptions } from "../../core/services/routing/request";
import { apiBase } from "./company";
import { NamePrefix, ProcessParams, RelaxAfterTime, TimeBudgetSeconds } from "./routing";

const COLUMNS =
  "Files: `.xlsx` (first worksheet) or `.csv` (comma, semicolon or tab separated), first row the column names. Columns: the `deliverydata` field names " +
  "(`custom_id`, `contactcompany`, `contactfirstname`, `contactlastname`, `street`, `housenumber`, `postalcode`, `city`, `country`, `email`, `phonenr`, `lat`, `lng`, " +
  "`pdt_from`, `pdt_to`, `els`, `load`, `notes`, `scancode` (alias `barcode`, `Sendungsnummer`, `Paketnummer`: the parcel's code the driver app checks at the door)) or German headings (`Firma`, `Strasse`, `Hausnummer`, `PLZ`, `Ort`, `Von`, `Bis`, …), plus `tour` for pre-clustered rows. " +
  "A row with an `external_id` (the sending system's order id) the company has already changes that delivery instead of adding one (an upsert: " +
  "its fields and its address as the row gives them), unless it is on a route that is on the way (listed in `vague_addresses` then). " +
  "Rows that cannot be used (nothing found for the address, bad numbers or times) are skipped and listed in the process's `vague_addresses` with file, row, " +
  "reason and the address as given (`street`, `housenumber`, `postalcode`, `city`, `country`). An empty file, or one with a header and no data rows, is a 422 and nothing is created. " +
  `Limits: ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB per request (413); an XLSX entry may inflate to ${SHEET_LIMITS.entryBytes / 1024 / 1024} MiB, the workbook to ${SHEET_LIMITS.totalBytes / 1024 / 1024} MiB, ` +
  `at most ${SHEET_LIMITS.ratio}:1 compressed beyond the first MiB (413, whatever sizes the archive declares); ${SHEET_LIMITS.rows} data rows, ${SHEET_LIMITS.columns} columns, ` +
  `${SHEET_LIMITS.cells} cells (empty ones included) and ${SHEET_LIMITS.cellChars} characters per cell (422). A damaged archive (truncated, wrong CRC, overlapping or encrypted entries) is a 422.`;

const UploadForm = z
  .object({
    "file[]": z.any().openapi({ type: "array", maxItems: MAX_UPLOAD_FILES, items: { type: "string", format: "binary", maxLength: MAX_UPLOAD_BYTES }, description: "Spreadsheet file(s)" }),
    email: z.string().max(200).optional().openapi({ description: "Recipient of the result spreadsheet (default: the uploading dispatcher)" }),
  })
  .openapi("UploadForm");

const formBody = { required: true, content: { "multipart/form-data": { schema: UploadForm } } };

const flag = (fallback: boolean) => BooleanQuery.optional().transform((v) => v ?? fallback);
const UploadQuery = z.object({
  cancelroutes: flag(false).openapi({ description: "Cancel unfinished routes first" }),
  assign_drivers: flag(false).openapi({ description: "Assign available active drivers to the tours" }),
  preclustered: flag(true).openapi({ description: "Rows with the same `tour` value stay on one tour (default true)" }),
  usearea: flag(false),
  relax_minutes: z.coerce.number().int().min(0).max(300).refine((v) => v % 30 === 0, "steps of 30 minutes").optional(),
  relax_after_time: RelaxAfterTime,
  num_vehicles: z.coerce.number().int().min(1).max(500).optional(),
  numvehicles: z.coerce.number().int().min(1).max(500).optional(),
  nameprefix: NamePrefix,
  time_budget_seconds: TimeBudgetSeconds,
});

const text = z.string().nullable();
const VagueAddress = z
  .object({ file: z.string(), row: z.number().int(), message: z.string(), fields: z.string(), street: text, housenumber: text, postalcode: text, city: text, country: text })
  .openapi("VagueAddress", { description: "A skipped row: file, row number (header = 1), why, and its address as the file gives it" });

const Started = z.object({ message: z.string(), process_id: z.string() }).openapi("UploadStarted");

const oneStep = apiRoute({
  method: "post",
  path: "/upload/onestep",
  operationId: "uploadAndRoute",
  tags: ["Uploads"],
  summary: "Upload spreadsheets and route them in one step",
  description: `Stores the files, then imports, clusters and routes them asynchronously; follow \`GET /process/status/{process_id}\`. The result spreadsheet (CSV) is linked from the \`final\` record and emailed. ${COLUMNS}`,
  request: { query: UploadQuery, body: formBody },
  responses: { 200: jsonResponse(Started, "Accepted; the process id") },
});

const deliveryOnly = apiRoute({
  method: "post",
  path: "/upload/deliveryonly",
  operationId: "uploadDeliveries",
  tags: ["Uploads"],
  summary: "Upload spreadsheets as deliveries, to route later",
  description: `Creates the deliveries at once. Route them with \`POST /batchrouting/{process_id}\` or any routing call. ${COLUMNS}`,
  request: { body: formBody },
  responses: {
    200: jsonResponse(
      Started.extend({ num_created: z.number().int(), num_updated: z.number().int().openapi({ description: "Deliveries changed by their `external_id` (beyond the interface)" }), delivery_ids: z.array(z.number().int()), vague_addresses: z.array(VagueAddress) }),
      "The created deliveries and the rows skipped",
    ),
  },
});


const batch = apiRoute({
  method: "post",
  path: "/batchrouting/{process_id}",
  operationId: "routeUploadedDeliveries",
  tags: ["Uploads"],
  summary: "Route the deliveries of a deliveries-only upload",
  description: "Starts routing (asynchronously, as the same process) of the deliveries an earlier `POST /upload/deliveryonly` created; answers the initial status of every action. Query parameters as for uploads.",
  request: { params: ProcessParams, query: UploadQuery },
  responses: { 200: jsonResponse(z.object({ message: z.string(), process_id: z.string(), status: z.record(z.string(), z.unknown()) }), "Routing started") },
});

const result = apiRoute({
  method: "get",
  path: "/process/result/{process_id}",
  operationId: "getProcessResult",
  tags: ["Uploads"],
  summary: "The result spreadsheet of a one-step upload (CSV)",
  request: { params: ProcessParams },
  responses: { 200: { description: "CSV: one line per delivery in driving order", content: { "text/csv": { schema: z.string() } } } },
});

/** The uploaded files of the form, checked for count and size. */
async function formFiles(form: FormData) {
  const files = [...form.getAll("file[]"), ...form.getAll("file")].filter((f): f is File => typeof f === "object" && f !== null && "arrayBuffer" in f);
  if (!files.length) throw unprocessable("Attach at least one spreadsheet as file[]", "file[]");
  if (files.length > MAX_UPLOAD_FILES) throw unprocessable(`At most ${MAX_UPLOAD_FILES} files per upload`, "file[]");
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total > MAX_UPLOAD_BYTES) throw new ApiError(413, `Uploads are limited to ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB`, "file[]");
  return Promise.all(files.map(async (f) => ({ name: f.name || "upload", bytes: new Uint8Array(await f.arrayBuffer()) })));
}

const routingOptions = (q: z.infer<typeof UploadQuery>): RoutingOptions => ({
  truck: false,
  roundtrip: true,
  traffic: false,
  cancelroutes: q.cancelroutes,
  assign_drivers: q.assign_drivers,
  usearea: q.usearea,
  preclustered: q.preclustered,
  num_vehicles: q.num_vehicles ?? q.numvehicles,
  relax_minutes: q.relax_minutes,
  relax_after_time: q.relax_after_time,
  nameprefix: q.nameprefix,
  time_budget_seconds: q.time_budget_seconds,
});

/** The multipart form (already parsed and cached by the request validator). */
async function readForm(c: { req: { formData(): Promise<FormData> | FormData } }): Promise<FormData> {
  try {
    return await c.req.formData();
  } catch {
    throw unprocessable("The body must be multipart/form-data", "file[]");
  }
}

export const uploadRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(
    oneStep,
    async (c) => {
      const form = await readForm(c);
      const email = form.get("email");
      if (email !== null && (typeof email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(email))) throw unprocessable("email is not an email address", "email");
      const files = await formFiles(form);
      const processId = await uploadOneStep(c.env, c.get("db"), c.get("company"), c.get("user").id, files, email ?? undefined, routingOptions(c.req.valid("query")), apiBase(c));
      return c.json({ message: "Upload accepted; routing runs in the background", process_id: processId }, 200);
    },
  )
  .openapi(
    deliveryOnly,
    async (c) => {
      const form = await readForm(c);
      const { processId, ids, updated, vague } = await uploadDeliveriesOnly(c.env, c.get("db"), c.get("company"), c.get("user").id, await formFiles(form));
      const created = ids.length - updated;
      return c.json({ message: `${created} deliveries created${updated ? `, ${updated} changed` : ""}`, process_id: processId, num_created: created, num_updated: updated, delivery_ids: ids, vague_addresses: vague }, 200);
    },
  )
  .openapi(batch, async (c) => {
    const { process_id } = c.req.valid("param");
    const status = await batchRouting(c.env, c.get("db"), c.get("company"), process_id, routingOptions(c.req.valid("query")), apiBase(c));
    return c.json({ message: "Routing started", process_id, status }, 200);
  })
  .openapi(result, async (c) => {
    const { process_id } = c.req.valid("param");
    const csv = await resultSpreadsheet(c.env, c.get("db"), c.get("company").id, process_id);
    return c.body(csv, 200, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="routes-${process_id}.csv"` });
  });
