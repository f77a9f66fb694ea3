/** Installing the driver app: its service worker (sw.ts) keeps the app shell for offline starts. */
import { slug } from "../shared/session";

export function registerShellWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register(`/${slug}/driver-sw.js`, { scope: `/${slug}/driver` }).catch((err: unknown) => console.warn("service worker not registered", err));
}
