/**
 * The vector base map's style (protomaps-leaflet paint and label rules over the Protomaps basemap
 * layers): streets, water, land use and place names in muted greys, so the Okabe–Ito colours of
 * the tours stay the strongest thing on the map. Streets are white with grey casings on a light
 * grey ground; water a grey-blue; parks a faint grey-green. Labels are dark grey with a white halo,
 * in system sans-serif, drawn on the canvas at the screen's pixel ratio (sharp at 1x and 2x).
 */
import {
  CenteredTextSymbolizer,
  type Feature,
  GeomType,
  type LabelRule,
  LineLabelSymbolizer,
  LineSymbolizer,
  type PaintRule,
  PolygonSymbolizer,
  exp,
} from "protomaps-leaflet";

export const COLORS = {
  background: "#e4e4e1",
  earth: "#efeeeb",
  park: "#e2e7df",
  industrial: "#e8e8e6",
  landuse: "#ebeae6",
  water: "#c9d3da",
  building: "#e2e1dd",
  casing: "#cbcac6",
  highwayCasing: "#b4b3ae",
  road: "#ffffff",
  rail: "#c4c3bf",
  boundary: "#a9a9a9",
  label: "#555555",
  labelMinor: "#6f6f6f",
  waterLabel: "#66788a",
  halo: "#ffffff",
} as const;

const kind = (f?: Feature) => (f && typeof f.props.kind === "string" ? f.props.kind : "");
const is = (...kinds: string[]) => (_z: number, f: Feature) => kinds.includes(kind(f));

/** Width in px of a road class by zoom (exponential, like the Protomaps style). */
const widths = {
  highway: exp(1.6, [[6, 0.8], [10, 1.6], [14, 5], [18, 18]]),
  major: exp(1.6, [[8, 0.6], [12, 1.6], [15, 4.5], [18, 14]]),
  minor: exp(1.6, [[12, 0.4], [13, 0.9], [15, 2.6], [18, 10]]),
  other: exp(1.6, [[14, 0.5], [18, 5]]),
};
const casing = (w: (z: number) => number, extra: number) => (z: number) => w(z) + extra;

export const paintRules: PaintRule[] = [
  { dataLayer: "earth", symbolizer: new PolygonSymbolizer({ fill: COLORS.earth }) },
  { dataLayer: "landcover", symbolizer: new PolygonSymbolizer({ fill: COLORS.landuse, opacity: 0.6 }) },
  {
    dataLayer: "landuse",
    symbolizer: new PolygonSymbolizer({ fill: COLORS.park }),
    filter: is("park", "forest", "wood", "nature_reserve", "national_park", "protected_area", "cemetery", "golf_course", "grass", "grassland", "village_green", "allotments", "playground", "scrub"),
  },
  { dataLayer: "landuse", symbolizer: new PolygonSymbolizer({ fill: COLORS.industrial }), filter: is("industrial", "railway", "aerodrome", "military") },
  { dataLayer: "landuse", symbolizer: new PolygonSymbolizer({ fill: COLORS.landuse }), filter: is("hospital", "school", "university", "college", "pedestrian", "beach", "zoo") },
  { dataLayer: "water", symbolizer: new PolygonSymbolizer({ fill: COLORS.water }), filter: (_z, f) => f.geomType === GeomType.Polygon },
  { dataLayer: "water", minzoom: 12, symbolizer: new LineSymbolizer({ color: COLORS.water, width: exp(1.6, [[12, 1], [18, 8]]) }), filter: (_z, f) => f.geomType === GeomType.Line },
  { dataLayer: "buildings", minzoom: 14, symbolizer: new PolygonSymbolizer({ fill: COLORS.building }) },
  // Casings first, then the fills over them, minor to major.
  { dataLayer: "roads", minzoom: 13, symbolizer: new LineSymbolizer({ color: COLORS.casing, width: casing(widths.minor, 1) }), filter: is("minor_road") },
  { dataLayer: "roads", symbolizer: new LineSymbolizer({ color: COLORS.casing, width: casing(widths.major, 1.2) }), filter: is("major_road") },
  { dataLayer: "roads", symbolizer: new LineSymbolizer({ color: COLORS.highwayCasing, width: casing(widths.highway, 1.4) }), filter: is("highway") },
  { dataLayer: "roads", minzoom: 14, symbolizer: new LineSymbolizer({ color: COLORS.road, width: widths.other, dash: [3, 2], dashColor: COLORS.casing }), filter: is("path", "other") },
  { dataLayer: "roads", symbolizer: new LineSymbolizer({ color: (z) => (z < 13 ? COLORS.casing : COLORS.road), width: widths.minor }), filter: is("minor_road") },
  { dataLayer: "roads", symbolizer: new LineSymbolizer({ color: COLORS.road, width: widths.major }), filter: is("major_road") },
  { dataLayer: "roads", symbolizer: new LineSymbolizer({ color: COLORS.road, width: widths.highway }), filter: is("highway") },
  { dataLayer: "roads", minzoom: 11, symbolizer: new LineSymbolizer({ color: COLORS.rail, width: 1, dash: [4, 3], dashColor: COLORS.rail }), filter: is("rail") },
  { dataLayer: "boundaries", symbolizer: new LineSymbolizer({ color: COLORS.boundary, width: 1, dash: [4, 2], dashColor: COLORS.boundary }) },
];

const NAME = ["name:en", "name"];

export const labelRules: LabelRule[] = [
  {
    dataLayer: "places",
    symbolizer: new CenteredTextSymbolizer({ labelProps: NAME, fill: COLORS.label, stroke: COLORS.halo, width: 3, font: (z) => `600 ${z < 10 ? 13 : 16}px sans-serif` }),
    filter: is("locality"),
    sort: (a, b) => Number(a.min_zoom ?? 0) - Number(b.min_zoom ?? 0),
  },
  {
    dataLayer: "places",
    minzoom: 11,
    symbolizer: new CenteredTextSymbolizer({ labelProps: NAME, fill: COLORS.labelMinor, stroke: COLORS.halo, width: 3, letterSpacing: 1, font: "500 12px sans-serif", textTransform: "uppercase" }),
    filter: is("neighbourhood", "macrohood", "suburb"),
  },
  {
    dataLayer: "water",
    minzoom: 10,
    symbolizer: new CenteredTextSymbolizer({ labelProps: NAME, fill: COLORS.waterLabel, stroke: COLORS.halo, width: 2, font: "italic 400 12px sans-serif" }),
    filter: (_z, f) => f.geomType === GeomType.Point,
  },
  {
    dataLayer: "roads",
    minzoom: 12,
    symbolizer: new LineLabelSymbolizer({ labelProps: NAME, fill: COLORS.label, stroke: COLORS.halo, width: 3, font: "500 12px sans-serif" }),
    filter: is("highway", "major_road"),
  },
  {
    dataLayer: "roads",
    minzoom: 15,
    symbolizer: new LineLabelSymbolizer({ labelProps: NAME, fill: COLORS.labelMinor, stroke: COLORS.halo, width: 3, font: "400 11px sans-serif" }),
    filter: is("minor_road"),
  },
];
