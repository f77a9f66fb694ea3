/** The day report's data: the range (following the console's day), `GET /report/day` for it, and its downloads, all through the API client. */
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { DayReport } from "../../shared/contract/day-report";
import { type Api, errorText } from "../shared/api";
import { saveFile } from "../shared/save-file";

export type ReportDownload = { format: "csv"; table: "routes" | "drivers" } | { format: "xlsx" };

export function useDayReport(api: Api, day: string) {
  const [from, setFrom] = useState(day);
  const [to, setTo] = useState(day);
  const [report, setReport] = useState<DayReport | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  // The console's day picker moves the report's day along.
  useEffect(() => {
    setFrom(day);
    setTo(day);
  }, [day]);

  const query = useMemo((): Record<string, string> => (from === to ? { date: from } : { from, to }), [from, to]);
  const load = useCallback(async () => {
    setBusy(true);
    try {
      // The shared contract type: stop_details are there, asked for with `stops`.
      setReport((await api.get("/report/day", { query: { ...query, stops: true } })) as DayReport);
      setError("");
    } catch (err) {
      setError(errorText(err));
      setReport(null);
    } finally {
      setBusy(false);
    }
  }, [api, query]);
  useEffect(() => void load(), [load]);

  /** The range's report as a file, saved under the name the service gives it. */
  const download = async (what: ReportDownload) => {
    try {
      const file = await api.download("/report/day", { ...query, ...what });
      saveFile(file.blob, file.filename ?? `day-report.${what.format}`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return { from, setFrom, to, setTo, report, error, busy, load, download };
}
