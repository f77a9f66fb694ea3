/**
 * The proof of a reported delivery in the route view: recipient, time and
 * place of the report (flagged when it was made far from the address), the
 * scanned code, the photo and the signature (fetched with the token: the
 * images are never public), and, for dispatchers, deleting it (logged by the
 * service).
 */
import { useEffect, useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { time } from "../shared/format";
import { decodeToken } from "../shared/session";
import type { DeliveryProof, ProofSummary } from "../../shared/contract/proof";

/** An image of the API as an object URL for `<img>` (the request carries the token). */
function useAuthorisedImage(api: Api, url: string | null) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    if (!url) return setSrc(null);
    let objectUrl: string | null = null;
    let live = true;
    api
      .downloadLink(url)
      .then(({ blob }) => {
        if (!live) return;
        objectUrl = URL.createObjectURL(blob);
        setSrc(objectUrl);
      })
      .catch(() => undefined);
    return () => {
      live = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [api, url]);
  return src;
}

function ProofRecord({ api, proof, canDelete, onDeleted }: { api: Api; proof: DeliveryProof; canDelete: boolean; onDeleted: () => void }) {
  const photo = useAuthorisedImage(api, proof.photo?.url ?? null);
  const signature = useAuthorisedImage(api, proof.signature?.url ?? null);
  const [error, setError] = useState("");
  const remove = async () => {
    if (!confirm("Delete this proof of delivery (photo, signature, recipient)? This is logged.")) return;
    try {
      await api.send("DELETE", "/delivery/{delivery_id}/proof/{proof_id}", { path: { delivery_id: proof.delivery_id, proof_id: proof.id } });
      onDeleted();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div class="proof" data-proof-id={proof.id}>
      <dl>
        <dt>Received by</dt>
        <dd data-testid="proof-recipient">{proof.recipient ?? "–"}</dd>
        <dt>Reported</dt>
        <dd>
          {time(proof.reported_at)}
          {proof.distance_m !== null && ` · ${proof.distance_m} m from the address`}
          {proof.far_from_address && (
            <strong class="error" data-testid="proof-far">
              {" "}
              ⚠ far from the delivery address
            </strong>
          )}
        </dd>
        {proof.scanned_code !== null && (
          <>
            <dt>Parcel scanned</dt>
            <dd data-testid="proof-scan">
              {proof.scanned_code} {proof.scan_match === false ? <strong class="error">⚠ not this delivery's code</strong> : proof.scan_match ? "✓ matches" : ""}
            </dd>
          </>
        )}
      </dl>
      <div class="proof-images">
        {proof.photo && (photo ? <img src={photo} alt="Photo taken at the door" data-testid="proof-photo" /> : <span class="muted">Loading photo…</span>)}
        {proof.signature && (signature ? <img src={signature} alt="Signature of the recipient" class="signature" data-testid="proof-signature" /> : <span class="muted">Loading signature…</span>)}
      </div>
      {canDelete && (
        <button type="button" class="secondary danger" onClick={remove}>
          Delete proof
        </button>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}

/** The summary line of a proof from what an event said of it (the hint of ProofDetails); null: the proof was deleted. */
export const proofHint = (p: ProofSummary | null) =>
  p ? [p.photo && "photo", p.signature && "signature", p.recipient && "recipient", p.far_from_address && "⚠ far from address", p.scan_match === false && "⚠ wrong parcel scanned"].filter(Boolean).join(", ") : "deleted";

/** The proofs of one delivery, loaded when the dispatcher opens them. */
export function ProofDetails({ api, deliveryId, hint }: { api: Api; deliveryId: number; hint?: string }) {
  const [open, setOpen] = useState(false);
  const [proofs, setProofs] = useState<DeliveryProof[] | null>(null);
  const [error, setError] = useState("");
  const load = () =>
    api.get("/delivery/{delivery_id}/proof", { path: { delivery_id: deliveryId } }).then(
      (env) => setProofs(env.objects),
      (err: unknown) => setError(errorText(err)),
    );
  useEffect(() => {
    if (open) void load();
  }, [open, deliveryId]);
  const canDelete = decodeToken(api.token)?.role === "dispatcher";
  return (
    <details class="proof-details" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Proof of delivery{hint ? ` · ${hint}` : ""}</summary>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {proofs === null ? (
        <p class="muted">Loading…</p>
      ) : proofs.length === 0 ? (
        <p class="muted" data-testid="proof-none">
          No proof recorded.
        </p>
      ) : (
        proofs.map((p) => <ProofRecord key={p.id} api={api} proof={p} canDelete={canDelete} onDeleted={() => void load()} />)
      )}
    </details>
  );
}
