/**
 * The rest of the day re-planned (`POST /calcroute/replan`): every assigned, accepted and on-the-way route of the
 * day shown, each from where its driver is; and a route's stops handed to the others when
 * its van breaks down or its driver drops out (`handover_route_id`, from the route's actions). The service replaces
 * the routes (new ids) and cancels a handed-over one; its progress shows here as the optimisation's does.
 */
import { useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { Alert } from "../shared/shell";
import { ProcessProgress, type ProcessView, startedProcess } from "./process";
import { RUNNING_ROUTE_STATUSES } from "../../shared/contract/states";
import type { Route } from "../shared/types";

/** Starts a re-plan (the day's running routes, or the hand-over of one) and answers its process to follow. */
export async function startReplan(api: Api, body: { handover_route_id?: number; route_ids?: number[] }): Promise<ProcessView> {
  const res = await api.send("POST", "/calcroute/replan", { body });
  return startedProcess(res.process_id, "replan");
}

const isRunning = (r: Route) => RUNNING_ROUTE_STATUSES.includes(r.status);

export function Replan({ api, routes, process, onProcess }: { api: Api; routes: Route[]; process: ProcessView | null; onProcess: (p: ProcessView) => void }) {
  const running = routes.filter(isRunning).length;
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const replan = async () => {
    setError("");
    setBusy(true);
    try {
      onProcess(await startReplan(api, { route_ids: routes.filter(isRunning).map((r) => r.id) }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="replan" aria-label="Re-plan running routes">
      <button type="button" class="secondary" disabled={busy || running === 0 || process?.status === "running"} onClick={replan}>
        Re-plan the rest of the day ({running} running {running === 1 ? "route" : "routes"})
      </button>
      <Alert text={error} />
      {process && <ProcessProgress process={process} api={api} onProcess={onProcess} />}
    </section>
  );
}
