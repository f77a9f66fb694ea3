/**
 * The console's map (Leaflet, SVG renderer for the tours: no GPU needed). The base map is chosen at
 * runtime from `GET /tiles/map.json` (docs/features/base-map.md): the deployment's vector tile archive
 * (protomaps-leaflet draws it on canvas tiles, style in basemap-style.ts), else the configured
 * raster tiles, else a plain background with a light outline of the countries (world-atlas, served
 * as a static asset; also drawn around the archive's region). Every tile comes from the page's own
 * origin (the Worker reads the archive or passes the raster tiles on), so the CSP stays `img-src 'self'`.
 */
import L from "leaflet";
import { feature } from "topojson-client";

/** `GET /tiles/map.json`. */
export interface BaseMapConfig {
  mode: "vector" | "raster" | "none";
  tiles: string | null;
  attribution: string | null;
  attribution_url: string | null;
  bounds: [number, number, number, number] | null;
  minzoom: number | null;
  maxzoom: number | null;
}

export type LngLat = [number, number];

export interface MapStop {
  id: number;
  n: number;
  at: LngLat;
  status: string;
  label: string;
}

export interface MapRoute {
  id: number;
  color: string;
  line: LngLat[];
  stops: MapStop[];
}

/** The map pane of area layers: under the routes and stops. */
export const AREA_PANE = "areas";
const OUTLINE_PANE = "outline";
/** Deepest zoom the map offers; vector tiles are drawn from the archive's deepest level beyond it. */
const MAX_ZOOM = 18;
/** The zoom of a city around the depot, where the map opens while no route is drawn. */
const DEPOT_ZOOM = 12;

const toLatLng = ([lng, lat]: LngLat): L.LatLngExpression => [lat, lng];
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The attribution the data's licence requires, as text with a link to the licence (never the archive's own HTML). */
const attributionHtml = (text: string, url: string | null) =>
  url && /^https:\/\//.test(url) ? `<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${escapeHtml(text)}</a>` : escapeHtml(text);

export class DispatchMap {
  private readonly map: L.Map;
  private readonly routes = L.layerGroup();
  private readonly drivers = new Map<number, L.Marker>();
  private depot: L.Marker | null = null;
  private overlay: L.Layer | null = null;
  private bounds: Map<number, L.LatLngBounds> = new Map();
  private fitted = false;

  constructor(private readonly el: HTMLElement) {
    this.map = L.map(el, { zoomControl: true, attributionControl: true, keyboard: true, maxZoom: MAX_ZOOM }).setView([51.2, 10.4], 6);
    this.map.attributionControl.setPrefix(false);
    // Panes under the routes' overlay pane (z-index 400): the country outlines at the bottom, the
    // base map's tiles (tile pane, 200) over them, the areas above both.
    this.map.createPane(OUTLINE_PANE).style.zIndex = "150";
    this.map.createPane(AREA_PANE).style.zIndex = "350";
    void this.loadBaseMap();
    this.routes.addTo(this.map);
  }

  /** Reads which base map to draw and draws it; the element's `data-basemap` says which one (for tests and support). */
  private async loadBaseMap() {
    let config: BaseMapConfig | null = null;
    try {
      const res = await fetch("/tiles/map.json");
      if (res.ok) config = (await res.json()) as BaseMapConfig;
    } catch {
      // Offline or the service is restarting: the outlines need no tiles.
    }
    const attribution = config?.attribution ? attributionHtml(config.attribution, config.attribution_url) : undefined;
    if (config?.mode === "raster" && config.tiles) {
      L.tileLayer(config.tiles, { maxZoom: MAX_ZOOM, maxNativeZoom: config.maxzoom ?? 19, attribution, className: "basemap-raster" }).addTo(this.map);
    } else {
      void this.drawOutline();
      if (config?.mode === "vector" && config.tiles && config.bounds) {
        // The renderer (protomaps-leaflet, ~40 KB gzip) is loaded only when there is an archive to draw.
        const { vectorBaseMap } = await import("./vector-basemap");
        const layer = vectorBaseMap({ tiles: config.tiles, bounds: config.bounds, minzoom: config.minzoom ?? 0, maxzoom: config.maxzoom ?? 14, maxZoom: MAX_ZOOM, attribution });
        layer.addTo(this.map);
        layer.getContainer()?.classList.add("basemap-vector");
      }
    }
    this.el.dataset.basemap = config?.mode ?? "none";
  }

  private async drawOutline() {
    const res = await fetch("/assets/countries-110m.json");
    if (!res.ok) return;
    const topo = (await res.json()) as { objects: { countries: unknown } };
    L.geoJSON(feature(topo, topo.objects.countries), { interactive: false, pane: OUTLINE_PANE, style: { className: "country-outline", color: "#9aa3ad", weight: 1, fillColor: "#ffffff", fillOpacity: 1 } })
      .addTo(this.map);
  }

  setDepot(at: LngLat | null) {
    this.depot?.remove();
    this.depot = at
      ? L.marker(toLatLng(at), { icon: L.divIcon({ className: "depot-marker", html: "<span>D</span>", iconSize: [26, 26] }), title: "Depot", keyboard: false }).addTo(this.map)
      : null;
    // A day without routes yet opens on the depot's city, not on the country-wide start view; the first routes refit.
    if (at && !this.fitted) this.map.setView(toLatLng(at), DEPOT_ZOOM);
  }

  /** Redraws every route: its line and its numbered stops (status as symbol and text, not colour alone). */
  setRoutes(routes: MapRoute[], focused: number | null) {
    this.routes.clearLayers();
    this.bounds.clear();
    for (const r of routes) {
      const dim = focused !== null && focused !== r.id;
      const line = L.polyline(r.line.map(toLatLng), { color: r.color, weight: focused === r.id ? 6 : 4, opacity: dim ? 0.3 : 0.9, className: `route-line route-${r.id}` });
      line.addTo(this.routes);
      const b = line.getBounds();
      for (const s of r.stops) {
        b.extend(toLatLng(s.at));
        const icon = L.divIcon({
          className: `stop-marker status-${s.status}${dim ? " dim" : ""}`,
          html: `<span data-route="${r.id}" data-delivery="${s.id}">${s.n}</span>`,
          iconSize: [24, 24],
        });
        const marker = L.marker(toLatLng(s.at), { icon, title: s.label, alt: s.label, keyboard: false }).addTo(this.routes);
        // Through the DOM, not a style attribute: the pages' CSP allows no inline styles.
        const ring = marker.getElement()?.firstElementChild as HTMLElement | null;
        if (ring) ring.style.borderColor = r.color;
      }
      if (b.isValid()) this.bounds.set(r.id, b);
    }
    if (!this.fitted && this.bounds.size) {
      this.fitted = true;
      this.fitAll();
    }
  }

  /** An optional layer under the routes (the tour and postal-code areas; drawn in the pane `AREA_PANE`); null removes it. */
  setOverlay(layer: L.Layer | null) {
    this.overlay?.remove();
    this.overlay = layer;
    layer?.addTo(this.map);
  }

  /** After the container was hidden (timeline view) or resized. */
  resize() {
    this.map.invalidateSize();
  }

  fitAll() {
    const all = [...this.bounds.values()].reduce<L.LatLngBounds | null>((acc, b) => (acc ? acc.extend(b) : L.latLngBounds(b.getSouthWest(), b.getNorthEast())), null);
    if (all) this.map.fitBounds(all, { padding: [30, 30] });
  }

  focus(routeId: number) {
    const b = this.bounds.get(routeId);
    if (b) this.map.fitBounds(b, { padding: [40, 40] });
  }

  /** Moves (or places) a driver's marker; the element carries its position for tests and assistive tools. */
  setDriver(driverId: number, name: string, at: LngLat, timestamp: string) {
    let marker = this.drivers.get(driverId);
    const initials = name.split(/\s+/).map((w) => w[0] ?? "").join("").slice(0, 2).toUpperCase() || "?";
    if (!marker) {
      marker = L.marker(toLatLng(at), {
        icon: L.divIcon({ className: "driver-marker", html: `<span>${escapeHtml(initials)}</span>`, iconSize: [30, 30] }),
        title: `Driver ${name}`,
        keyboard: false,
        zIndexOffset: 1000,
      }).addTo(this.map);
      this.drivers.set(driverId, marker);
    } else marker.setLatLng(toLatLng(at));
    const el = marker.getElement();
    if (el) {
      el.dataset.driverId = String(driverId);
      el.dataset.lnglat = `${at[0].toFixed(5)},${at[1].toFixed(5)}`;
      el.dataset.timestamp = timestamp;
    }
  }
}
