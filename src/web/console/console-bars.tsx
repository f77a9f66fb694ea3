/** The console's bars: the top bar (day, live state, log out) and the switch between the main views. */
import { ConnectionBadge } from "../shared/shell";
import type { LiveState } from "../shared/live";

export type View = "map" | "timeline" | "report";
const VIEWS: [View, string][] = [
  ["map", "Map"],
  ["timeline", "Timeline"],
  ["report", "Report"],
];

export function TopBar({ day, onDay, live, logout }: { day: string; onDay: (day: string) => void; live: LiveState; logout: () => void }) {
  return (
    <header class="topbar">
      <h1>Dispatch console</h1>
      <label class="inline">
        Day <input type="date" value={day} onInput={(e) => onDay(e.currentTarget.value)} name="day" />
      </label>
      <ConnectionBadge state={live} />
      <button type="button" class="secondary" onClick={logout}>
        Log out
      </button>
    </header>
  );
}

export function ViewSwitch({ view, onView }: { view: View; onView: (view: View) => void }) {
  return (
    <div role="group" aria-label="View" class="view-switch">
      {VIEWS.map(([v, label]) => (
        <button type="button" class="secondary" aria-pressed={view === v} onClick={() => onView(v)}>
          {label}
        </button>
      ))}
    </div>
  );
}
