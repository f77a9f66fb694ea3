/** How the day report writes its figures and names (the view, the charts and their tables alike). */
import type { RouteLine } from "../../shared/contract/day-report";

export const percent = (share: number | null) => (share === null ? "–" : `${Math.round(share * 1000) / 10} %`);
export const num = (n: number | null, digits = 1) => (n === null ? "–" : n.toLocaleString("en-GB", { maximumFractionDigits: digits, minimumFractionDigits: 0 }));
/** Minutes as hours. */
export const hours = (minutes: number | null) => num(minutes === null ? null : minutes / 60);
export const routeName = (r: Pick<RouteLine, "name" | "route_id">) => r.name ?? `Route ${r.route_id}`;
export const driverLabel = (d: { driver_name: string | null }) => d.driver_name ?? "no driver";
