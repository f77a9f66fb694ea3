/** The side panel's open deliveries of the day: new and edit (delivery-form.tsx), into the best running tour (best-tour.tsx), select, optimise the selection or compare variants, and the optimisation's progress. */
import { useEffect, useState } from "preact/hooks";
import { DeliveryStatus } from "../../shared/contract/states";
import { type Api, errorText } from "../shared/api";
import { placeName, windowsText, zonedIso } from "../shared/format";
import type { Delivery } from "../shared/types";
import { DeliveryForm } from "./delivery-form";
import { ProcessProgress, type ProcessView, startedProcess } from "./process";
import { Variants } from "./variants";
import { BestTour } from "./best-tour";
import { SkillTags } from "../shared/skills";

export function OpenDeliveries({ api, day, deliveries, process, onProcess }: { api: Api; day: string; deliveries: Delivery[]; process: ProcessView | null; onProcess: (p: ProcessView) => void }) {
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [editing, setEditing] = useState<Delivery | "new" | null>(null);
  const [saved, setSaved] = useState("");
  const [placing, setPlacing] = useState<number | null>(null);
  const ids = deliveries.map((d) => d.id).filter((id) => selected.has(id));
  const toggle = (id: number) => setSelected((prev) => (prev.has(id) ? new Set([...prev].filter((x) => x !== id)) : new Set(prev).add(id)));
  const allSelected = deliveries.length > 0 && ids.length === deliveries.length;

  return (
    <section aria-labelledby="open-title">
      <h2 id="open-title">Open deliveries ({deliveries.length})</h2>
      {editing ? (
        <DeliveryForm
          key={editing === "new" ? "new" : editing.id}
          api={api}
          day={day}
          delivery={editing === "new" ? undefined : editing}
          onDone={(d) => {
            setEditing(null);
            setSaved(`Delivery ${d.custom_id ?? d.id} saved.`);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <button type="button" class="secondary" onClick={() => (setSaved(""), setEditing("new"))}>
          New delivery…
        </button>
      )}
      {saved && <p role="status">{saved}</p>}
      {deliveries.length > 0 && (
        <label class="inline">
          <input type="checkbox" checked={allSelected} onChange={() => setSelected(allSelected ? new Set() : new Set(deliveries.map((d) => d.id)))} /> Select all
        </label>
      )}
      <ul class="open-deliveries" data-testid="open-deliveries">
        {deliveries.map((d) => (
          <li key={d.id}>
            <label class="inline">
              <input type="checkbox" checked={selected.has(d.id)} onChange={() => toggle(d.id)} data-delivery-id={d.id} />
              <span>
                {placeName(d)} <span class="muted">{windowsText(d)}</span>
                <SkillTags skills={d.required_skills} />
                {d.status === DeliveryStatus.undelivered && <span class="error"> ✗ not delivered before</span>}
              </span>
            </label>
            <span class="actions">
              <button type="button" class="link" onClick={() => (setSaved(""), setPlacing(placing === d.id ? null : d.id))} aria-label={`Best tour for ${placeName(d)}`}>
                Best tour
              </button>
              <button type="button" class="link" onClick={() => (setSaved(""), setEditing(d))} aria-label={`Edit ${placeName(d)}`}>
                Edit
              </button>
            </span>
            {placing === d.id && <BestTour api={api} delivery={d} onDone={(message) => (setPlacing(null), setSaved(message))} onClose={() => setPlacing(null)} />}
          </li>
        ))}
      </ul>
      <OptimiseForm api={api} day={day} ids={ids} running={process?.status === "running"} onStarted={(p) => (onProcess(p), setSelected(new Set()))} />
      <Variants api={api} ids={ids} onCreated={() => setSelected(new Set())} />
      {process && <ProcessProgress process={process} api={api} onProcess={onProcess} />}
    </section>
  );
}

/** Optimises the selected deliveries into tours (`POST /calcroute/optimized/timewindow`): how many vehicles, from when, back to the depot or not. */
function OptimiseForm({ api, day, ids, running, onStarted }: { api: Api; day: string; ids: number[]; running: boolean; onStarted: (p: ProcessView) => void }) {
  const [vehicles, setVehicles] = useState(2);
  const [start, setStart] = useState("08:00");
  const [roundtrip, setRoundtrip] = useState(true);
  const [error, setError] = useState("");
  // A refusal of the old session is no news once the dispatcher has logged in again.
  useEffect(() => setError(""), [api]);

  const optimise = async (e: Event) => {
    e.preventDefault();
    setError("");
    try {
      const res = await api.send("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: ids, start_time: zonedIso(day, start) }, query: { num_vehicles: vehicles, roundtrip } });
      if (!("process_id" in res)) throw new Error("The service planned in the request instead of starting a process");
      onStarted(startedProcess(res.process_id, "optimisation"));
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <>
      <form class="optimise" onSubmit={optimise} aria-label="Optimise the selected deliveries">
        <label>
          Vehicles
          <input type="number" min={1} max={50} value={vehicles} onInput={(e) => setVehicles(Number(e.currentTarget.value))} name="num_vehicles" />
        </label>
        <label>
          Start time
          <input type="time" value={start} onInput={(e) => setStart(e.currentTarget.value)} name="start_time" />
        </label>
        <label class="inline">
          <input type="checkbox" checked={roundtrip} onChange={(e) => setRoundtrip(e.currentTarget.checked)} name="roundtrip" /> Round trip
        </label>
        <button type="submit" disabled={ids.length === 0 || running}>
          Optimise {ids.length} {ids.length === 1 ? "delivery" : "deliveries"}
        </button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </>
  );
}
