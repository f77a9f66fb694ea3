/**
 * Routing variants of the selected open deliveries (`POST /routingvariants`,
 * computed without storing anything) side by side: tours, kilometres,
 * driving days. Picking one creates exactly its tours: one synchronous
 * calculation per tour with the variant's stops in its order (`fix_order`).
 */
import { useEffect, useState } from "preact/hooks";
import { Alert } from "../shared/shell";
import { type Api, errorText } from "../shared/api";
import type { RoutingVariant as Variant } from "../../shared/contract/routing";

const TITLE: Record<Variant["name"], string> = { fewest_tours: "Fewest tours", shorter_days: "Shorter days", one_more_tour: "One more tour" };

const km = (m: number) => `${(m / 1000).toFixed(1)} km`;
const hours = (s: number) => `${Math.floor(s / 3600)}:${String(Math.round((s % 3600) / 60)).padStart(2, "0")} h`;

const ROWS: [string, (v: Variant) => string][] = [
  ["Tours", (v) => String(v.tours)],
  ["Distance", (v) => km(v.distance)],
  ["Duration (all tours)", (v) => hours(v.duration)],
  ["Longest tour", (v) => hours(v.longest_tour)],
  ["Waiting", (v) => hours(v.waiting)],
  ["Not planned", (v) => String(v.unassigned.length)],
];

export function Variants({ api, ids, onCreated }: { api: Api; ids: number[]; onCreated: () => void }) {
  const [variants, setVariants] = useState<Variant[] | null>(null);
  const [busy, setBusy] = useState("");
  const [error, setError] = useState("");
  const [done, setDone] = useState("");
  const key = ids.join(",");
  // Variants answer for one selection: a changed selection needs a new comparison.
  useEffect(() => setVariants(null), [key]);

  const compare = async () => {
    setError("");
    setDone("");
    setBusy("Computing variants…");
    try {
      const res = await api.send("POST", "/routingvariants", { body: { deliveryids: ids } });
      setVariants([...res.mainvariant, ...res.variants]);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy("");
    }
  };

  const create = async (v: Variant) => {
    setError("");
    let made = 0;
    try {
      for (const [i, sequence] of v.sequences.entries()) {
        setBusy(`Creating tour ${i + 1} of ${v.sequences.length}…`);
        await api.send("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: sequence, fix_order: true }, query: { async: false, num_vehicles: 1 } });
        made++;
      }
      setDone(`Created ${made} ${made === 1 ? "tour" : "tours"} of "${TITLE[v.name]}".`);
      setVariants(null);
      onCreated();
    } catch (err) {
      setError(`${made ? `${made} of ${v.sequences.length} tours were created, then: ` : ""}${errorText(err)}`);
    } finally {
      setBusy("");
    }
  };

  return (
    <div class="variants">
      <button type="button" class="secondary" disabled={ids.length === 0 || !!busy} onClick={compare}>
        Compare variants
      </button>
      {busy && (
        <p role="status" class="muted">
          {busy}
        </p>
      )}
      {done && <p role="status">{done}</p>}
      <Alert text={error} />
      {variants && (
        <table class="variant-table" data-testid="variants">
          <caption>Variants for {ids.length} deliveries</caption>
          <thead>
            <tr>
              <td />
              {variants.map((v) => (
                <th scope="col" key={v.name} data-variant={v.name} title={v.description}>
                  {TITLE[v.name]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {ROWS.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {variants.map((v) => (
                  <td key={v.name}>{value(v)}</td>
                ))}
              </tr>
            ))}
            <tr>
              <td />
              {variants.map((v) => (
                <td key={v.name}>
                  <button type="button" disabled={!!busy || v.tours === 0} onClick={() => create(v)} aria-label={`Create ${TITLE[v.name]} (${v.tours} tours)`}>
                    Create
                  </button>
                </td>
              ))}
            </tr>
          </tbody>
        </table>
      )}
    </div>
  );
}
