/** What a routing run ends with: its outcome, the plan it hands to the write, and the failure of its process. */
import type { Solution } from "../../../solver";
import type { PlannedRoute, RoutingParams } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { companyStub } from "../live";

/** The link of a routing process's result: its routes. */
export const resultLink = (apiBase: string, processId: string) => `${apiBase}/process/status/${processId}/final?response_data=base`;

export type RoutingOutcome =
  | { ok: true; routeIds: number[] }
  /** `conflict`: a route the plan replaces changed between reading and writing; nothing was written. */
  | { ok: false; error: string; unassigned?: { delivery_id: number; reason: string; remedy: string }[]; conflict?: true };

/** A run's plan, solved and ready to write (`planRun`, then `writeRuns`). */
export interface PlannedRun {
  processId: string;
  attempt: string;
  params: RoutingParams;
  plan: PlannedRoute[];
  relaxed: Solution["relaxed"];
  link: string;
}

/** Marks a process failed with the reason, unless its run `attempt` lost the claim. */
export async function failRun(env: Env, companyId: number, processId: string, attempt: string, error: string, extra: Record<string, unknown> = {}) {
  const coordinator = companyStub(env, companyId);
  if (!(await coordinator.holdsClaim(processId, attempt))) return;
  await coordinator.updateProcess(processId, "routing", { status: "failed", meta: { error, ...extra } });
  await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error } });
}
