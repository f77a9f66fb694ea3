/**
 * A new order into the running tour where it costs least (`POST /calcroute/insert`): the prices of every running
 * tour of the day first (a dry run: the cheapest first, those that cannot take it with the reason), then the tour
 * the dispatcher picks written (that route is replaced by one with the new stop, as an update does).
 */
import { useEffect, useState } from "preact/hooks";
import type { InsertionCandidate } from "../../shared/contract/routing";
import { type Api, errorText } from "../shared/api";
import { placeName, time } from "../shared/format";
import type { Delivery } from "../shared/types";

/** How many priced tours the panel lists. */
const SHOWN = 5;

const tourName = (c: InsertionCandidate) => c.custom_id ?? `Route ${c.route_id}`;

export function BestTour({ api, delivery, onDone, onClose }: { api: Api; delivery: Delivery; onDone: (message: string) => void; onClose: () => void }) {
  const [candidates, setCandidates] = useState<InsertionCandidate[] | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setCandidates(null);
    setError("");
    api
      .send("POST", "/calcroute/insert", { body: { deliveryids: [delivery.id], dry_run: true } })
      .then((r) => setCandidates(r.insertions[0].candidates))
      .catch((err) => setError(errorText(err)));
  }, [api, delivery.id]);

  const insert = async (c: InsertionCandidate) => {
    setBusy(true);
    setError("");
    try {
      await api.send("POST", "/calcroute/insert", { body: { deliveryids: [delivery.id], route_ids: [c.route_id] } });
      onDone(`${placeName(delivery)} joined ${tourName(c)} as stop ${c.orderindex} (about ${time(c.tdt)}).`);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="best-tour" role="region" aria-label={`Best running tour for ${placeName(delivery)}`}>
      {!candidates && !error && <p class="muted">Pricing the running tours…</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {candidates && (
        <ol>
          {candidates.slice(0, SHOWN).map((c) => (
            <li key={c.route_id}>
              <span>
                <strong>{tourName(c)}</strong>{" "}
                {c.feasible ? (
                  <>
                    +{((c.added_distance ?? 0) / 1000).toFixed(1)} km, stop {c.orderindex} at {time(c.tdt)}
                  </>
                ) : (
                  <span class="muted">{c.reason}</span>
                )}
              </span>
              {c.feasible && (
                <button type="button" disabled={busy} onClick={() => insert(c)}>
                  Insert
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
      <button type="button" class="link" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
