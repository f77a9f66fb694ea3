/** The console's day: from the address (`?day=YYYY-MM-DD`, so a link or a reload opens that day), else today; any other day goes back into the address. */
import { useEffect, useState } from "preact/hooks";
import { dayOf } from "../shared/format";

/** The day the address names, if a real one. */
function dayInAddress(): string | null {
  const day = new URLSearchParams(location.search).get("day");
  return day && /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(day)) ? day : null;
}

export function useDay(): [string, (day: string) => void] {
  const [day, setDay] = useState(() => dayInAddress() ?? dayOf(new Date()));
  useEffect(() => {
    // Any day but today goes into the address; today stays implicit, so a bookmark opens on the day it is used.
    if (!day) return;
    const url = new URL(location.href);
    if (day === dayOf(new Date())) url.searchParams.delete("day");
    else url.searchParams.set("day", day);
    if (url.href !== location.href) history.replaceState(history.state, "", url);
  }, [day]);
  return [day, setDay];
}
