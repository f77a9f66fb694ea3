/**
 * The driver's phone page: the current route (`/currentdriverroute`), accept
 * and start it, stops in order, report each one; while the route is on the
 * way the phone's positions go to `/drivertracking` in batches (kept while
 * offline and sent later with their original timestamps). A stop report may
 * carry a photo, the recipient's signature and name and the parcel's scanned
 * code (proof-inputs.tsx); reports wait in IndexedDB (report-queue.ts) until
 * they are sent, so one made offline goes out later with its own time.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, type Api } from "../shared/api";
import { PhotoField, ScanField, SignaturePad } from "./proof-inputs";
import { type PendingReport, flushReports, keepReport, pendingReports, reportKey } from "./report-queue";
import { LiveSocket, type LiveState } from "../shared/live";
import { ConnectionBadge } from "../shared/shell";
import { addressLine, loadCompanyTimeZone, placeName, span, time, windowsText } from "../shared/format";
import { heldWindow } from "../../shared/contract/delivery-window";
import { DELIVERY_STATUS_LABEL, DELIVERY_STATUS_SYMBOL, type Delivery, type Point, ROUTE_STATUS_LABEL, type Route } from "../shared/types";
import type { LiveMessage } from "../../shared/contract/live";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import { SkillTags } from "../shared/skills";
import { BreakItems } from "../shared/breaks";

const FLUSH_MS = 10_000;
const BATCH = 20;

interface Fix {
  timestamp: string;
  position: Point;
}

/** Positions from `watchPosition`, posted in batches; failed posts stay buffered. */
function usePositionSharing(api: Api, active: boolean) {
  const buffer = useRef<Fix[]>([]);
  /** The newest fix: where a stop report is made. */
  const last = useRef<{ lat: number; lng: number; accuracy?: number } | null>(null);
  const [pending, setPending] = useState(0);
  const [state, setState] = useState<"off" | "sharing" | "denied">("off");

  const flush = useCallback(async () => {
    const batch = buffer.current.slice(0, BATCH);
    if (!batch.length) return;
    try {
      await api.send("POST", "/drivertracking", { body: batch });
      buffer.current = buffer.current.slice(batch.length);
    } catch {
      // Offline or refused: keep the positions and try again later.
    }
    setPending(buffer.current.length);
  }, [api]);

  useEffect(() => {
    if (!active || !("geolocation" in navigator)) return;
    let first = true;
    const watch = navigator.geolocation.watchPosition(
      (p) => {
        setState("sharing");
        last.current = { lat: p.coords.latitude, lng: p.coords.longitude, accuracy: Number.isFinite(p.coords.accuracy) ? Math.min(p.coords.accuracy, 100_000) : undefined };
        buffer.current.push({ timestamp: new Date(p.timestamp).toISOString(), position: { type: "Point", coordinates: [p.coords.longitude, p.coords.latitude] } });
        setPending(buffer.current.length);
        // The first fix goes out at once so the dispatcher sees the driver immediately.
        if (first || buffer.current.length >= BATCH) void flush();
        first = false;
      },
      () => setState("denied"),
      { enableHighAccuracy: true, maximumAge: 5_000 },
    );
    const timer = window.setInterval(() => void flush(), FLUSH_MS);
    const online = () => void flush();
    window.addEventListener("online", online);
    return () => {
      navigator.geolocation.clearWatch(watch);
      window.clearInterval(timer);
      window.removeEventListener("online", online);
      void flush();
      setState("off");
    };
  }, [active, flush]);

  return { state, pending, last };
}

const geoLink = (d: Delivery) => {
  const c = d.delivery_address?.coordinates ?? d.address?.location?.coordinates;
  return c ? `geo:${c[1]},${c[0]}?q=${c[1]},${c[0]}(${encodeURIComponent(placeName(d))})` : null;
};

/** This browser's identifier as the driver's device (`imei` of /activatedriver), kept across logins. */
function deviceId(): string {
  let id = localStorage.getItem("dispatch:device");
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem("dispatch:device", id);
  }
  return id;
}

/** A new driver activates the phone once with the code from the invitation email. */
function Activation({ api, onActivated }: { api: Api; onActivated: () => void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await api.send("POST", "/activatedriver", { body: { code: code.trim(), imei: deviceId() } });
      onActivated();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form class="activation" onSubmit={submit} aria-labelledby="activate-title">
      <h2 id="activate-title">Activate this phone</h2>
      <p>Enter the activation code from your invitation email. Routes can only be given to activated drivers.</p>
      <label>
        Activation code
        <input value={code} onInput={(e) => setCode(e.currentTarget.value)} autocomplete="one-time-code" required />
      </label>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button type="submit" class="big">
        Activate
      </button>
    </form>
  );
}

export function DriverApp({ api, driverId, logout }: { api: Api; driverId: number; logout: () => void }) {
  const [route, setRoute] = useState<Route | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState("");
  const [live, setLive] = useState<LiveState>("connecting");
  const [busy, setBusy] = useState(false);
  const shown = useRef<number | null>(null);
  const shownRoute = useRef<Route | null>(null);
  /** What the dispatcher changed about the route on screen (a re-plan, an update), until the driver has read it. */
  const [change, setChange] = useState("");
  const [active, setActive] = useState<boolean | null>(null);

  const refresh = useCallback(async () => {
    try {
      const ref = await api.get("/currentdriverroute/{driver_id}", { path: { driver_id: driverId } }).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      });
      // A route just finished stays on screen (with its summary) until the next one arrives.
      const id = ref?.route_id ?? shown.current;
      const next = id ? await api.get("/route/{route_id}", { path: { route_id: id } }) : null;
      const keep = next && (ref || next.status === RouteStatus.finished) ? next : null;
      const before = shownRoute.current;
      if (before && keep && keep.id !== before.id && keep.replaces === before.id) setChange(routeChange(before, keep));
      else if (before && !keep && next?.id === before.id && next.status === RouteStatus.cancelled) setChange("Your route was cancelled by the dispatcher: its open stops went to other routes.");
      shown.current = keep?.id ?? null;
      shownRoute.current = keep;
      setRoute(keep);
      setError("");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  }, [api, driverId]);

  useEffect(() => {
    // Unreadable: show the route view, whose own calls report what is wrong.
    api.get("/driver/{driver_id}", { path: { driver_id: driverId } }).then((d) => setActive(d.active), () => undefined);
  }, [api, driverId]);

  useEffect(() => {
    // Times follow the company's zone: refresh once it is known.
    loadCompanyTimeZone(api).then(() => void refresh(), () => void refresh());
    const onEvent = (e: LiveMessage) => {
      if (e.type === "route" || e.type === "delivery" || e.type === "eta") void refresh();
    };
    const socket = new LiveSocket(api, onEvent, setLive, () => void refresh());
    return () => socket.close();
  }, [api, refresh]);

  const sharing = usePositionSharing(api, route?.status === RouteStatus.ontheway);

  // Stop reports: kept in IndexedDB first, then sent; what the network did not take waits for the next try.
  const [waiting, setWaiting] = useState<PendingReport[]>([]);
  const flushing = useRef(false);
  const flush = useCallback(async () => {
    if (flushing.current) return;
    flushing.current = true;
    try {
      const { sent, refused } = await flushReports(api);
      setWaiting(await pendingReports().catch(() => []));
      if (refused.length) setError(refused.join(" "));
      if (sent || refused.length) await refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      flushing.current = false;
      setWaiting(await pendingReports().catch(() => []));
    }
  }, [api, refresh]);
  useEffect(() => {
    void flush();
    const online = () => void flush();
    window.addEventListener("online", online);
    const timer = window.setInterval(() => void flush(), 15_000);
    return () => {
      window.removeEventListener("online", online);
      window.clearInterval(timer);
    };
  }, [flush]);
  const report = async (d: Delivery, input: ReportInput) => {
    setBusy(true);
    try {
      await keepReport({ key: reportKey(), deliveryId: d.id, ...input, position: sharing.last.current ?? undefined, reported_at: new Date().toISOString() });
      setWaiting(await pendingReports());
    } catch (err) {
      setError(`The report could not be kept on this phone: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
    await flush();
  };
  const waitingIds = new Set(waiting.map((w) => w.deliveryId));

  const act = async (run: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await run();
      await refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const setStatus = (status: number) => act(() => api.send("POST", "/setroutestatus/{route_id}", { path: { route_id: route!.id }, body: { status } }));

  const next = route?.deliveries.find((d) => d.status === DeliveryStatus.routed) ?? null;

  return (
    <div class="driver">
      <header class="topbar">
        <h1>My route</h1>
        <ConnectionBadge state={live} />
        <button type="button" class="secondary" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {change && (
          <p role="status" class="route-change" data-testid="route-change">
            {change}{" "}
            <button type="button" class="secondary" onClick={() => setChange("")}>
              OK
            </button>
          </p>
        )}
        {active === false ? (
          <Activation api={api} onActivated={() => setActive(true)} />
        ) : loading ? (
          <p>Loading…</p>
        ) : !route ? (
          <p class="empty" data-testid="no-route">
            No route assigned to you right now. New routes appear here by themselves.
          </p>
        ) : (
          <section aria-labelledby="route-title" data-route-id={route.id} data-status={route.status}>
            <h2 id="route-title">{route.custom_id || `Route ${route.id}`}</h2>
            <p>
              Status: <strong class="route-status">{ROUTE_STATUS_LABEL[route.status]}</strong> · start {span(route.tst_from, route.tst_to)} · {route.deliveries.length} stops
            </p>
            {route.status === RouteStatus.assigned && (
              <button type="button" class="big" disabled={busy} onClick={() => setStatus(RouteStatus.accepted)}>
                Accept route
              </button>
            )}
            {route.status === RouteStatus.accepted && (
              <button type="button" class="big" disabled={busy} onClick={() => setStatus(RouteStatus.ontheway)}>
                Start route
              </button>
            )}
            {route.status === RouteStatus.ontheway && (
              <p class="sharing" role="status" data-state={sharing.state}>
                {sharing.state === "sharing"
                  ? `● Sharing your position${sharing.pending ? ` (${sharing.pending} waiting to be sent)` : ""}`
                  : sharing.state === "denied"
                    ? "Position sharing is blocked: allow location access for this page."
                    : "Waiting for your position…"}
              </p>
            )}
            {route.status === RouteStatus.finished && <p class="done">✓ Route finished. Thank you!</p>}
            {waiting.length > 0 && (
              <p role="status" class="waiting" data-testid="waiting-reports">
                {waiting.length === 1 ? "1 stop report" : `${waiting.length} stop reports`} waiting to be sent (no network yet):{" "}
                {waiting.map((w) => placeName(route.deliveries.find((d) => d.id === w.deliveryId) ?? ({ id: w.deliveryId } as Delivery))).join(", ")}. They go out with their original time when the phone is online.
              </p>
            )}
            <ol class="stops">
              <BreakItems breaks={route.breaks} after={0} />
              {route.deliveries.map((d, i) => [
                <Stop
                  key={d.id}
                  n={i + 1}
                  delivery={d}
                  isNext={d === next}
                  waiting={waitingIds.has(d.id)}
                  canReport={route.status === RouteStatus.ontheway && d.status === DeliveryStatus.routed && !waitingIds.has(d.id)}
                  busy={busy}
                  onReport={(input) => report(d, input)}
                />,
                <BreakItems key={`breaks-${d.id}`} breaks={route.breaks} after={d.orderindex ?? i + 1} />,
              ])}
            </ol>
          </section>
        )}
      </main>
    </div>
  );
}

/** The change from the route the driver had to the one that replaced it, in words: stops added and given away, the order. */
export function routeChange(before: Route, after: Route): string {
  const open = (r: Route) => r.deliveries.filter((d) => d.status === DeliveryStatus.routed);
  const was = open(before);
  const now = open(after);
  const added = now.filter((d) => !was.some((w) => w.id === d.id));
  const gone = was.filter((w) => !now.some((d) => d.id === w.id));
  const kept = now.filter((d) => was.some((w) => w.id === d.id)).map((d) => d.id);
  const reordered = kept.join() !== was.filter((w) => kept.includes(w.id)).map((w) => w.id).join();
  const parts = [
    ...(added.length ? [`${added.length === 1 ? "1 stop" : `${added.length} stops`} added (${added.map(placeName).join(", ")})`] : []),
    ...(gone.length ? [`${gone.length === 1 ? "1 stop" : `${gone.length} stops`} taken off (${gone.map(placeName).join(", ")})`] : []),
    ...(reordered ? ["a new order"] : []),
  ];
  return `Your route was re-planned: ${parts.length ? parts.join(", ") : "new times"}.`;
}

interface ReportInput {
  status: "delivered" | "undelivered";
  drivernotes?: string;
  recipient?: string;
  scancode?: string;
  photo?: Blob;
  signature?: Blob;
}

function Stop({ n, delivery: d, isNext, waiting, canReport, busy, onReport }: { n: number; delivery: Delivery; isNext: boolean; waiting: boolean; canReport: boolean; busy: boolean; onReport: (input: ReportInput) => void }) {
  const [notes, setNotes] = useState("");
  const [recipient, setRecipient] = useState("");
  const [code, setCode] = useState("");
  const [photo, setPhoto] = useState<Blob | null>(null);
  const [signature, setSignature] = useState<Blob | null>(null);
  const link = geoLink(d);
  const send = (status: ReportInput["status"]) =>
    onReport({ status, drivernotes: notes.trim() || undefined, recipient: recipient.trim() || undefined, scancode: code.trim() || undefined, photo: photo ?? undefined, signature: signature ?? undefined });
  return (
    <li class={`stop${isNext ? " next" : ""}`} data-delivery-id={d.id} data-status={d.status} aria-current={isNext ? "step" : undefined}>
      <div class="stop-head">
        <span class="stop-n">{n}</span>
        <span class="stop-name">{placeName(d)}</span>
        <span class={`delivery-status status-${d.status}`}>
          {DELIVERY_STATUS_SYMBOL[d.status]} {DELIVERY_STATUS_LABEL[d.status]}
        </span>
      </div>
      <p class="muted">{addressLine(d.address)}</p>
      <p>
        Window {span(heldWindow(d).from, heldWindow(d).to)}
        {!!d.time_windows?.length && <span class="muted"> (of {windowsText(d)})</span>} · ETA {time(d.eta_from)}
      </p>
      {d.notes && <p class="notes">Note: {d.notes}</p>}
      {!!d.required_skills?.length && (
        <p>
          Needs <SkillTags skills={d.required_skills} />
        </p>
      )}
      {d.scancode && <p class="muted">Parcel code: {d.scancode}</p>}
      {link && (
        <a href={link} class="navigate">
          Open in maps
        </a>
      )}
      {waiting && (
        <p class="waiting" data-testid="stop-waiting">
          Reported, waiting to be sent
        </p>
      )}
      {canReport && (
        <div class="report">
          <ScanField n={n} expected={d.scancode} value={code} onChange={setCode} />
          <label>
            Received by (stop {n})
            <input value={recipient} onInput={(e) => setRecipient(e.currentTarget.value)} autocomplete="off" maxLength={200} />
          </label>
          <PhotoField n={n} photo={photo} onChange={setPhoto} />
          <SignaturePad n={n} onChange={setSignature} />
          <label>
            Notes for stop {n}
            <input value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
          </label>
          <button type="button" disabled={busy} onClick={() => send("delivered")}>
            ✓ Delivered
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => send("undelivered")}>
            ✗ Not delivered
          </button>
        </div>
      )}
    </li>
  );
}
