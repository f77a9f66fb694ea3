/** The breaks of a planned route between its stops, the same in the console and the driver app. */
import type { RouteBreak } from "../../shared/contract/breaks";
import { span } from "./format";

const REASON: Record<RouteBreak["reason"], string> = { fixed: "fixed break", "de-arbzg": "working-time law (ArbZG)", "eu-561": "driving-time rules (EU 561/2006)" };
const WHERE: Record<RouteBreak["where"], string> = { "after-service": "after this stop", "before-service": "at the next stop, before its service", "on-the-way": "on the way to the next stop" };

/** What a person reads of a break: "Break 30 min, 12:10–12:40, working-time law (ArbZG)". */
export const breakText = (b: RouteBreak) => `Break ${b.minutes} min, ${span(b.start, b.end)}, ${REASON[b.reason]}`;

/** A route's breaks that lie after the stop of orderindex `after` (0: before the first), as items of its stop list. */
export function BreakItems({ breaks, after }: { breaks: readonly RouteBreak[] | undefined; after: number }) {
  return (
    <>
      {(breaks ?? []).filter((b) => b.after_orderindex === after).map((b) => (
        <li key={b.start} class="break-item" data-testid="route-break" data-reason={b.reason}>
          <span aria-hidden="true">☕ </span>
          {breakText(b)}
          <span class="muted"> · {b.after_orderindex === 0 && b.where === "after-service" ? "before the first stop" : WHERE[b.where]}</span>
        </li>
      ))}
    </>
  );
}
