/** What a routing run ends with: its outcome, the plan it hands to the write, the failure of its process, and what its process shows afterwards. */
import { and, asc, eq } from "drizzle-orm";
import type { Solution } from "../../../solver";
import type { Db } from "../../context";
import type { ProcessState } from "../../coordinator/processes";
import { allOnOnePage } from "../../db/list";
import { processes, routes } from "../../db/schema";
import type { PlannedRoute, RoutingParams } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { conflict, notFound, unprocessable } from "../../errors";
import { companyStub } from "../live";
import { presentRoutes } from "../route-records";

/** The link of a routing process's result: its routes. */
export const resultLink = (apiBase: string, processId: string) => `${apiBase}/process/status/${processId}/final?response_data=base`;

export type RoutingOutcome =
  | { ok: true; routeIds: number[] }
  /** `conflict`: a route the plan replaces changed between reading and writing; nothing was written. */
  | { ok: false; error: string; unassigned?: UnassignedDelivery[]; conflict?: true };

/** A run's plan, solved and ready to write (`planRun`, then `writeRuns`). */
export interface PlannedRun {
  processId: string;
  attempt: string;
  params: RoutingParams;
  plan: PlannedRoute[];
  relaxed: Solution["relaxed"];
  link: string;
  /** What a re-plan could not place (back among the open deliveries), with the reasons. */
  unassigned?: UnassignedDelivery[];
}

export interface UnassignedDelivery {
  delivery_id: number;
  reason: string;
  remedy: string;
}

/** A run that wrote nothing, as the refusal of the request that ran it: 409 when a route changed meanwhile, else 422 naming what could not be placed with the remedies. */
export function refusal(outcome: Extract<RoutingOutcome, { ok: false }>): never {
  if (outcome.conflict) throw conflict(outcome.error, "route_id");
  const ids = outcome.unassigned?.map((u) => u.delivery_id) ?? [];
  throw unprocessable(
    outcome.unassigned ? `${outcome.error}: ${outcome.unassigned.map((u) => `${u.delivery_id} (${u.remedy})`).join("; ")}` : outcome.error,
    ids.length ? ids.map(String) : "deliveryids",
  );
}

/** Marks a process failed with the reason, unless its run `attempt` lost the claim. */
export async function failRun(env: Env, companyId: number, processId: string, attempt: string, error: string, extra: Record<string, unknown> = {}) {
  const coordinator = companyStub(env, companyId);
  if (!(await coordinator.holdsClaim(processId, attempt))) return;
  await coordinator.updateProcess(processId, "routing", { status: "failed", meta: { error, ...extra } });
  await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error } });
}

/** The routes a process produced, as the list envelope (`all` adds the line strings). */
export async function processRoutes(db: Db, companyId: number, processId: string, withLine: boolean) {
  const rows = await db.select().from(routes).where(and(eq(routes.company_id, companyId), eq(routes.process_id, processId))).orderBy(asc(routes.id));
  const presented = await presentRoutes(db, companyId, rows);
  const objects = presented.map((r, i) => (withLine ? { ...r, routestring: rows[i].routestring ?? null } : r));
  return allOnOnePage(objects);
}

/** The company's process with this id (its D1 row, then the coordinator's record), or 404. */
export async function processState(env: Env, db: Db, companyId: number, processId: string): Promise<ProcessState> {
  const [row] = await db.select({ id: processes.id }).from(processes).where(and(eq(processes.company_id, companyId), eq(processes.id, processId)));
  const state = row ? await companyStub(env, companyId).getProcess(processId) : null;
  if (!state) throw notFound("Process");
  return state;
}
