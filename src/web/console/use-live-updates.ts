/**
 * The console's live channel: the socket's state, and what its events change:
 * driver positions, the processes, a (scheduled) refetch of the day, the
 * proofs' summary lines. After a reconnect everything is read again.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import type { LiveMessage } from "../../shared/contract/live";
import { RouteStatus } from "../../shared/contract/states";
import type { Api } from "../shared/api";
import { LiveSocket, type LiveState } from "../shared/live";
import { proofHint } from "./proof";
import { type DayData, lngLat } from "./use-day-data";
import type { Processes } from "./use-processes";

type Follows = Pick<DayData, "refresh" | "scheduleRefresh" | "movePosition"> & { processes: Processes };

export function useLiveUpdates(api: Api, { refresh, scheduleRefresh, movePosition, processes }: Follows) {
  const [live, setLive] = useState<LiveState>("connecting");
  // What the live events said of proofs (the route view's summary line; the proof itself is read when opened).
  const [proofHints, setProofHints] = useState<Record<number, string>>({});
  const { onEvent: onProcessEvent, onRouteCancelled, resync: resyncProcesses } = processes;

  const onMessage = useCallback(
    (e: LiveMessage) => {
      if (e.type === "driverposition") {
        const at = lngLat(e.position);
        if (at) movePosition(e.driver_id, at, e.timestamp);
      } else if (e.type === "process") {
        onProcessEvent(e);
        if (e.action === "final" && e.status === "finished") scheduleRefresh();
      } else if (e.type === "route" || e.type === "delivery" || e.type === "eta") {
        if (e.type === "route" && e.status === RouteStatus.cancelled) onRouteCancelled(e.id);
        if (e.type === "delivery" && e.proof !== undefined) setProofHints((prev) => ({ ...prev, [e.id]: proofHint(e.proof ?? null) }));
        scheduleRefresh();
      }
    },
    [movePosition, onProcessEvent, onRouteCancelled, scheduleRefresh],
  );

  // After a reconnect: everything refetched, and running processes read again.
  const resync = useCallback(() => {
    void refresh();
    resyncProcesses();
  }, [refresh, resyncProcesses]);

  useEffect(() => {
    const socket = new LiveSocket(api, onMessage, setLive, resync);
    return () => socket.close();
  }, [api, onMessage, resync]);

  return { live, proofHints };
}
