/**
 * The driver app's service worker: keeps the app shell (the page, its script,
 * stylesheet, manifest and icon) so the app opens without a network. Network
 * first, the cached copy only when the network fails; every other request —
 * the API and the websocket above all — passes untouched and is never cached.
 * Served as `/<slug>/driver-sw.js` with scope `/<slug>/driver`; `SHELL_VERSION`
 * (a hash of the shell's files, set by scripts/build-web.mjs) names the cache,
 * so a new build replaces the old copy.
 */
declare const SHELL_VERSION: string;

interface ExtendableEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface WorkerScope {
  location: Location;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
  addEventListener(type: "install" | "activate", listener: (e: ExtendableEvent) => void): void;
  addEventListener(type: "fetch", listener: (e: FetchEvent) => void): void;
}

const worker = self as unknown as WorkerScope;
const CACHE_PREFIX = "driver-shell-";
const CACHE = `${CACHE_PREFIX}${SHELL_VERSION}`;
/** Relative to this script (`/<slug>/driver-sw.js`). */
const SHELL = ["driver", "driver.webmanifest", "/assets/driver.js", "/assets/driver.css", "/assets/driver-icon.svg"].map((p) => new URL(p, worker.location.href).href);

worker.addEventListener("install", (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => worker.skipWaiting()));
});

worker.addEventListener("activate", (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith(CACHE_PREFIX) && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => worker.clients.claim()),
  );
});

worker.addEventListener("fetch", (e) => {
  if (e.request.method !== "GET") return;
  const url = new URL(e.request.url);
  const key = `${url.origin}${url.pathname}`;
  if (!SHELL.includes(key)) return;
  e.respondWith(
    fetch(e.request).then(
      async (res) => {
        if (res.ok) await (await caches.open(CACHE)).put(key, res.clone());
        return res;
      },
      async (err: unknown) => (await caches.match(key, { cacheName: CACHE })) ?? Promise.reject(err),
    ),
  );
});
