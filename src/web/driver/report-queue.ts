/**
 * Stop reports waiting to be sent, kept in IndexedDB so a report made without
 * a network (with its photo and signature) survives a closed tab or a reload
 * and goes out with its original time once the phone is online again. Sent in
 * the order they were made: the images (`POST /delivery/<id>/proof`) first,
 * then the report (`POST /deliverydone/<id>` with `reported_at`), each with an
 * `Idempotency-Key` of the report's own key: a send whose answer was lost is
 * repeated after the next reconnect and the service does it once.
 */
import { ApiError, type Api } from "../shared/api";

export interface PendingReport {
  /** Local id (also the IndexedDB key, increasing with time). */
  key: string;
  deliveryId: number;
  status: "delivered" | "undelivered";
  drivernotes?: string;
  recipient?: string;
  scancode?: string;
  position?: { lat: number; lng: number; accuracy?: number };
  reported_at: string;
  photo?: Blob;
  signature?: Blob;
  /** The images went out already (a retry sends only the report). */
  imagesSent?: boolean;
}

const DB_NAME = "dispatch-driver";
const STORE = "reports";

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "key" });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run<T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

export const pendingReports = () => run<PendingReport[]>("readonly", (s) => s.getAll() as IDBRequest<PendingReport[]>);
export const keepReport = (r: PendingReport) => run("readwrite", (s) => s.put(r));
const dropReport = (key: string) => run("readwrite", (s) => s.delete(key));

/** A key that sorts by creation time. */
export const reportKey = () => `${Date.now().toString().padStart(15, "0")}-${crypto.randomUUID()}`;

/** Not a refusal of the service: no network, the service unreachable, or the same report still running there (409 on its key). Such reports wait. */
const unreachable = (err: unknown) =>
  !(err instanceof ApiError) || err.status >= 500 || err.status === 429 || (err.status === 409 && err.fields.includes("Idempotency-Key"));

/**
 * Sends what waits, oldest first, until the first one that cannot go out for
 * lack of a network. A report the service refuses (the route was cancelled,
 * the delivery reported already) is dropped and its reason answered.
 */
export async function flushReports(api: Api): Promise<{ sent: number; refused: string[] }> {
  const refused: string[] = [];
  let sent = 0;
  const all = (await pendingReports()).sort((a, b) => a.key.localeCompare(b.key));
  for (const r of all) {
    try {
      if (!r.imagesSent && (r.photo || r.signature)) {
        const form = new FormData();
        if (r.photo) form.append("photo", r.photo, "photo.jpg");
        if (r.signature) form.append("signature", r.signature, "signature.png");
        await api.send("POST", "/delivery/{delivery_id}/proof", { path: { delivery_id: r.deliveryId }, body: form, idempotencyKey: `${r.key}-proof` });
        await keepReport({ ...r, imagesSent: true });
      }
      await api.send("POST", "/deliverydone/{delivery_id}", {
        path: { delivery_id: r.deliveryId },
        idempotencyKey: `${r.key}-report`,
        body: {
          status: r.status,
          drivernotes: r.drivernotes || undefined,
          recipient: r.recipient || undefined,
          scancode: r.scancode || undefined,
          // The interface's GeoJSON point, accuracy beside it (kept in the queue as the phone gave it).
          position: r.position && { type: "Point", coordinates: [r.position.lng, r.position.lat], accuracy: r.position.accuracy },
          reported_at: r.reported_at,
        },
      });
      await dropReport(r.key);
      sent++;
    } catch (err) {
      if (unreachable(err)) break;
      // A report made before idempotency keys, or kept past their hours: it arrived before, nothing is missing.
      // A key already used for another body: the report went out before (sent by an older app in the older shape).
      const arrived = err instanceof ApiError && ((err.status === 409 && /already reported/i.test(err.message)) || (err.status === 422 && err.fields.includes("Idempotency-Key")));
      if (!arrived) refused.push(`Stop report not accepted: ${err instanceof Error ? err.message : String(err)}`);
      await dropReport(r.key);
    }
  }
  return { sent, refused };
}
