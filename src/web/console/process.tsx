/**
 * Routing and upload processes as the console follows them: progress from the
 * websocket's `process` events, the result link, "cancelled" once every
 * tour the process made has been cancelled (the service keeps the process
 * itself finished; the dispatcher wants to know the result is gone), and
 * "stopped" when the dispatcher cancelled the running process itself
 * (`POST /process/cancel/<id>`: it fails with the error `cancelled`).
 */
import { useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { Alert } from "../shared/shell";
import type { LiveEvent } from "../../shared/contract/live";
import { RouteStatus } from "../../shared/contract/states";

const PROCESS_ACTIONS = ["import_deliveries", "cluster_deliveries", "routing", "final"];
/** The `error` of a process the dispatcher cancelled while it ran. */
const STOPPED = "cancelled";

export interface ProcessView {
  id: string;
  kind: "optimisation" | "upload" | "replan";
  progress: number;
  step: string;
  status: "running" | "finished" | "failed" | "cancelled" | "stopped";
  error?: string;
  /** The `final` record's link: the routes, or for an upload the result spreadsheet. */
  link?: string;
  /** The tours the process made, once it finished; and those cancelled since. */
  routeIds?: number[];
  cancelled?: number[];
  /** Routes cancelled while the process's tours were still being read: sorted out when they are known. */
  cancelledBefore?: number[];
  /** What a re-plan could not place: back among the open deliveries, each with the remedy. */
  left?: { delivery_id: number; remedy: string }[];
}

export type ProcessEvent = Extract<LiveEvent, { type: "process" }>;

export const startedProcess = (id: string, kind: ProcessView["kind"]): ProcessView => ({ id, kind, progress: 0, step: "import_deliveries", status: "running" });

const metaOf = (meta: string): Record<string, unknown> => {
  try {
    return JSON.parse(meta) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** The view after one `process` event of its process. */
export function processUpdate(prev: ProcessView, e: ProcessEvent): ProcessView {
  const meta = metaOf(e.meta);
  const link = e.action === "final" && e.link ? e.link : prev.link;
  if (e.status === "failed" && meta.error === STOPPED) return { ...prev, status: "stopped", error: undefined, step: e.action, link };
  if (e.status === "failed") return { ...prev, status: "failed", error: String(meta.error ?? "The process failed"), step: e.action, link };
  const index = Math.max(0, PROCESS_ACTIONS.indexOf(e.action));
  const done = e.status === "finished" || e.status === "skipped";
  const overall = Math.max(prev.progress, (index + (done ? 1 : Number(meta.progress) || 0)) / PROCESS_ACTIONS.length);
  const finished = e.action === "final" && e.status === "finished";
  const left = e.action === "routing" && Array.isArray(meta.unassigned_deliveries) ? { left: meta.unassigned_deliveries as ProcessView["left"] } : {};
  // A finished view stays finished (or cancelled): later events only bring the link.
  if (prev.status !== "running") return { ...prev, link };
  return { ...prev, ...left, progress: finished ? 1 : overall, step: e.action, status: finished ? "finished" : "running", link };
}

/** A route was cancelled: when it was the last remaining tour of a finished process, the process shows cancelled. */
export function routeCancelled(prev: ProcessView, routeId: number): ProcessView {
  // Its tours not known yet (still running, or being read): the event may concern one of them (withProcessRoutes decides).
  if (!prev.routeIds) return prev.status === "running" || prev.status === "finished" ? { ...prev, cancelledBefore: [...(prev.cancelledBefore ?? []), routeId] } : prev;
  if (!prev.routeIds.includes(routeId) || prev.cancelled?.includes(routeId)) return prev;
  const cancelled = [...(prev.cancelled ?? []), routeId];
  return { ...prev, cancelled, status: cancelled.length === prev.routeIds.length ? "cancelled" : prev.status };
}

/**
 * The tours a finished process made (`GET /process/status/<id>/final?response_data=base`), and those
 * cancelled: already when they were read, or by an event that came while they were being read (the
 * answer may predate it).
 */
export async function withProcessRoutes(api: Api, view: ProcessView): Promise<(current: ProcessView) => ProcessView> {
  const result = await api.get("/process/status/{process_id}/{action}", { path: { process_id: view.id, action: "final" }, query: { response_data: "base" } });
  const routes = ("objects" in result ? result.objects : undefined) ?? [];
  return ({ cancelledBefore = [], ...current }) =>
    routes
      .filter((r) => r.status === RouteStatus.cancelled || cancelledBefore.includes(r.id))
      .reduce<ProcessView>((v, r) => routeCancelled(v, r.id), { ...current, routeIds: routes.map((r) => r.id) });
}

type ProcessState = Record<string, { status: string; meta: string; link: string }>;

/** A process's records folded in as if their events had arrived. */
const withState = (view: ProcessView, state: ProcessState) =>
  PROCESS_ACTIONS.reduce((v, action) => (state[action] ? processUpdate(v, { type: "process", process_id: view.id, action, ...state[action] }) : v), view);

/** After a reconnect: the process's records as they are now. */
export async function resyncProcess(api: Api, view: ProcessView): Promise<ProcessView> {
  return withState(view, (await api.get("/process/status/{process_id}", { path: { process_id: view.id } })) as ProcessState);
}

/** Cancels a running process; the view as the service answers it (stopped). */
async function cancelProcess(api: Api, view: ProcessView): Promise<ProcessView> {
  return withState(view, (await api.send("POST", "/process/cancel/{process_id}", { path: { process_id: view.id } })) as ProcessState);
}

const TITLES: Record<ProcessView["kind"], string> = { optimisation: "Optimisation", upload: "Upload", replan: "Re-plan" };

/** The progress bar of a process, its state in words (not only the bar), its error; while it runs, a button to cancel it. */
export function ProcessProgress({ process, api, onProcess }: { process: ProcessView; api: Api; onProcess: (p: ProcessView) => void }) {
  const [cancelError, setCancelError] = useState("");
  const [cancelling, setCancelling] = useState(false);
  const cancel = async () => {
    setCancelError("");
    setCancelling(true);
    try {
      onProcess(await cancelProcess(api, process));
    } catch (err) {
      setCancelError(errorText(err));
    } finally {
      setCancelling(false);
    }
  };
  const title = TITLES[process.kind];
  const tours = process.routeIds?.length ?? 0;
  const cancelled = process.cancelled?.length ?? 0;
  const text = {
    running: `${title}: ${process.step.replace("_", " ")}`,
    finished: `${title} finished${cancelled ? ` (${cancelled} of ${tours} tours cancelled since)` : ""}`,
    failed: `${title} failed`,
    cancelled: `${title} finished, its ${tours === 1 ? "tour was" : "tours were"} cancelled since`,
    stopped: `${title} cancelled: no routes were written`,
  }[process.status];
  return (
    <div class="process" data-status={process.status} data-process-id={process.id}>
      <label>
        {text}
        <progress max={1} value={process.progress} aria-valuetext={`${Math.round(process.progress * 100)} %`} />
      </label>
      {process.status === "running" && (
        <button type="button" onClick={cancel} disabled={cancelling}>
          Cancel {title.toLowerCase()}
        </button>
      )}
      <Alert text={cancelError} />
      {!!process.left?.length && (
        <p class="left-open" data-testid="left-open">
          {process.left.length === 1 ? "1 delivery" : `${process.left.length} deliveries`} left open:{" "}
          {process.left.map((l) => `#${l.delivery_id} (${l.remedy})`).join("; ")}
        </p>
      )}
      {process.error && (
        <p role="alert" class="error">
          {process.error}
        </p>
      )}
    </div>
  );
}
