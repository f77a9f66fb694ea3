/**
 * The vector base map layer: protomaps-leaflet drawing the archive's tiles (`/tiles/{z}/{x}/{y}.mvt`)
 * on canvas tiles with the muted style of basemap-style.ts. Imported on demand by map.ts (its own
 * chunk), only when `/tiles/map.json` says there is an archive.
 */
import L from "leaflet";
import { leafletLayer } from "protomaps-leaflet";
import { COLORS, labelRules, paintRules } from "./basemap-style";

export function vectorBaseMap(o: { tiles: string; bounds: [number, number, number, number]; minzoom: number; maxzoom: number; maxZoom: number; attribution?: string }): L.GridLayer {
  // protomaps-leaflet extends the global Leaflet of a script tag; the bundle's Leaflet stands in for it.
  (globalThis as unknown as { L: typeof L }).L = L;
  const [w, s, e, n] = o.bounds;
  return leafletLayer({
    url: o.tiles,
    paintRules,
    labelRules,
    backgroundColor: COLORS.background,
    // Data tiles are 512 px: display zoom z shows the archive's level z − 1 (levelDiff 1); deeper zooms scale its last level.
    maxDataZoom: o.maxzoom,
    minZoom: o.minzoom === 0 ? 0 : o.minzoom + 1,
    maxZoom: o.maxZoom,
    bounds: [[s, w], [n, e]],
    attribution: o.attribution,
  }) as unknown as L.GridLayer;
}
