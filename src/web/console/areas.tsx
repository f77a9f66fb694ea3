/**
 * Tour areas and their postal-code areas as an optional map layer, from the
 * public areas endpoints (`GET /tourarea`, `GET /plzarea` filtered to the
 * postal codes inside this company's tour areas), drawn as GeoJSON without
 * tiles, in neutral dashed outlines so they never pass for a route. Each tour area carries its name as a label; the
 * list under the switch says the same for keyboard and screen-reader users.
 */
import L from "leaflet";
import { useEffect, useState } from "preact/hooks";
import type { Api } from "../shared/api";
import type { Driver } from "../shared/types";
import { personName } from "../shared/format";
import { AREA_PANE, type DispatchMap } from "./map";

type Geometry = GeoJSON.Polygon | GeoJSON.MultiPolygon;

interface TourArea {
  id: number;
  areaname: string | null;
  driver_id: number | null;
  geom: GeoJSON.MultiPolygon;
  plzareas: { num_results: number; objects: { plz: string }[] };
}

interface PlzArea {
  gid: number;
  plz: string;
  note: string | null;
  area_id: number | null;
  geom: Geometry;
}

const areaName = (a: TourArea) => a.areaname || `Area ${a.id}`;

/** Neutral outlines (the route colours stay the routes'); each tour area named on the map. */
function areaLayer(areas: TourArea[], postal: PlzArea[]): L.Layer {
  const group = L.layerGroup();
  for (const p of postal)
    L.geoJSON(p.geom, { pane: AREA_PANE, style: { className: "plz-area", color: "#5b6470", weight: 1, dashArray: "2 4", fillOpacity: 0 } })
      .bindTooltip(`${p.plz}${p.note ? ` ${p.note}` : ""}`, { sticky: true })
      .addTo(group);
  for (const a of areas)
    L.geoJSON(a.geom, { pane: AREA_PANE, interactive: false, style: { className: "tour-area", color: "#1b1f24", weight: 2, dashArray: "8 5", fillColor: "#5b6470", fillOpacity: 0.1 } })
      .bindTooltip(areaName(a), { permanent: true, direction: "center", className: "area-label" })
      .addTo(group);
  return group;
}

/** The switch of the area layer, with the areas as a list. */
export function AreaLayer({ api, map, drivers }: { api: Api; map: { current: DispatchMap | null }; drivers: Map<number, Driver> }) {
  const [on, setOn] = useState(false);
  const [areas, setAreas] = useState<TourArea[] | null>(null);
  const [error, setError] = useState("");

  useEffect(() => {
    if (!on) {
      map.current?.setOverlay(null);
      return;
    }
    let current = true;
    setError("");
    (async () => {
      const tour = await api.list("/tourarea", { order_by: [{ field: "id", direction: "asc" }] });
      const postal = tour.length ? await api.list("/plzarea", { filters: [{ name: "area_id", op: "is_not_null" }], order_by: [{ field: "plz", direction: "asc" }] }) : [];
      if (!current) return;
      setAreas(tour);
      map.current?.setOverlay(areaLayer(tour, postal));
    })().catch((err: unknown) => current && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      current = false;
    };
  }, [on, api]);

  return (
    <div class="area-layer">
      <label class="inline">
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.currentTarget.checked)} name="areas" /> Tour areas
      </label>
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
      {on && areas && (
        <details class="area-list">
          <summary>{areas.length === 1 ? "1 tour area" : `${areas.length} tour areas`}</summary>
          <ul data-testid="area-list">
            {areas.map((a) => (
              <li key={a.id} data-area-id={a.id}>
                {areaName(a)}: {a.plzareas.objects.map((p) => p.plz).join(", ") || "no postal codes"}
                {a.driver_id !== null && ` · driver ${personName(drivers.get(a.driver_id)) || a.driver_id}`}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
