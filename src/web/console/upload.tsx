/**
 * A spreadsheet (CSV or XLSX) uploaded and routed in one step
 * (`POST /upload/onestep`): progress from the websocket's `process` events,
 * the rows the import skipped, and when done the absolute link of the result
 * spreadsheet (the same link the email carries) with a download through the API.
 */
import { useEffect, useState } from "preact/hooks";
import { Alert } from "../shared/shell";
import { type Api, errorText } from "../shared/api";
import { saveFile } from "../shared/save-file";
import { ProcessProgress, type ProcessView, startedProcess } from "./process";

interface Skipped {
  row: number;
  file: string;
  message: string;
}

/** The result spreadsheet's link of a finished upload (the routing's own link comes first, then this one). */
const resultLink = (p: ProcessView) => (p.link && p.link.includes("/process/result/") ? p.link : "");

export function Upload({ api, process, onProcess }: { api: Api; process: ProcessView | null; onProcess: (p: ProcessView) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [vehicles, setVehicles] = useState("");
  const [cancelRoutes, setCancelRoutes] = useState(false);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [skipped, setSkipped] = useState<Skipped[]>([]);
  const running = process?.status === "running";
  const link = process ? resultLink(process) : "";
  const imported = process && process.step !== "import_deliveries";

  // Once the rows are imported: the ones skipped, with the reason.
  useEffect(() => {
    setSkipped([]);
    if (!process || !imported) return;
    api
      .get("/process/status/{process_id}/{action}", { path: { process_id: process.id, action: "import_deliveries" } })
      .then((r) => setSkipped("vague_addresses" in r ? (r.vague_addresses as Skipped[]) : []), () => undefined);
  }, [api, process?.id, imported]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return setError("Choose a spreadsheet first.");
    setError("");
    setBusy(true);
    try {
      const form = new FormData();
      form.append("file[]", file, file.name);
      const res = await api.send("POST", "/upload/onestep", { body: form, query: { num_vehicles: vehicles ? Number(vehicles) : undefined, cancelroutes: cancelRoutes || undefined } });
      onProcess(startedProcess(res.process_id, "upload"));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const download = async () => {
    try {
      const { blob, filename } = await api.downloadLink(link);
      saveFile(blob, filename ?? `routes-${process!.id}.csv`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section aria-labelledby="upload-title" class="upload">
      <h2 id="upload-title">Upload a spreadsheet</h2>
      <form onSubmit={submit} class="upload-form">
        <label>
          Spreadsheet (CSV or XLSX, first row the column names)
          <input type="file" name="file[]" accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <label>
          Tours at most (empty: one per active driver)
          <input type="number" min={1} max={500} value={vehicles} onInput={(e) => setVehicles(e.currentTarget.value)} name="upload_num_vehicles" />
        </label>
        <label class="inline">
          <input type="checkbox" checked={cancelRoutes} onChange={(e) => setCancelRoutes(e.currentTarget.checked)} name="cancelroutes" /> Cancel unfinished routes first
        </label>
        <button type="submit" disabled={busy || running}>
          Upload and plan
        </button>
      </form>
      <Alert text={error} />
      {process && <ProcessProgress process={process} api={api} onProcess={onProcess} />}
      {skipped.length > 0 && (
        <details class="skipped">
          <summary>
            {skipped.length} {skipped.length === 1 ? "row" : "rows"} skipped
          </summary>
          <ul>
            {skipped.map((s) => (
              <li key={`${s.file}:${s.row}`}>
                {s.file} row {s.row}: {s.message}
              </li>
            ))}
          </ul>
        </details>
      )}
      {process?.status === "finished" &&
        (link ? (
          <p class="result" data-testid="upload-result">
            Result spreadsheet: <code class="result-link">{link}</code>{" "}
            <button type="button" class="secondary" onClick={download}>
              Download result
            </button>
          </p>
        ) : (
          <p class="muted" role="status">
            Writing the result spreadsheet…
          </p>
        ))}
    </section>
  );
}
