/** The routing and upload processes this console started, as their events and records tell them (process.tsx). */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Api } from "../shared/api";
import { type ProcessEvent, type ProcessView, processUpdate, resyncProcess, routeCancelled, withProcessRoutes } from "./process";

export function useProcesses(api: Api) {
  const [processes, setProcesses] = useState<Map<string, ProcessView>>(new Map());

  // A finished process: which tours it made (to tell when they are all cancelled).
  const asked = useRef(new Set<string>());
  useEffect(() => {
    for (const p of processes.values()) {
      if (p.status !== "finished" || p.routeIds || asked.current.has(p.id)) continue;
      asked.current.add(p.id);
      withProcessRoutes(api, p).then(
        (update) => setProcesses((prev) => (prev.has(p.id) ? new Map(prev).set(p.id, update(prev.get(p.id)!)) : prev)),
        () => undefined,
      );
    }
  }, [api, processes]);

  /** Follows a process (just started, or as the service answered about it). */
  const track = useCallback((p: ProcessView) => setProcesses((prev) => new Map(prev).set(p.id, p)), []);
  /** The newest process of a kind. */
  const latest = (kind: ProcessView["kind"]) => [...processes.values()].reverse().find((p) => p.kind === kind) ?? null;
  /** An event of a process (one this console did not start is not followed). */
  const onEvent = useCallback(
    (e: ProcessEvent) => setProcesses((prev) => (prev.has(e.process_id) ? new Map(prev).set(e.process_id, processUpdate(prev.get(e.process_id)!, e)) : prev)),
    [],
  );
  const onRouteCancelled = useCallback((routeId: number) => setProcesses((prev) => new Map([...prev].map(([id, p]) => [id, routeCancelled(p, routeId)]))), []);

  // After a reconnect: running processes read again (their events may have been missed).
  const running = useRef(processes);
  running.current = processes;
  const resync = useCallback(() => {
    for (const p of running.current.values()) {
      if (p.status !== "running") continue;
      resyncProcess(api, p).then((next) => setProcesses((prev) => new Map(prev).set(p.id, next)), () => undefined);
    }
  }, [api]);

  return { track, latest, onEvent, onRouteCancelled, resync };
}

export type Processes = ReturnType<typeof useProcesses>;
