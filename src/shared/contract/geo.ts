/** GeoJSON shapes of the interface, positions `[longitude, latitude]`. */

export interface Point {
  type: "Point";
  coordinates: [number, number];
}

/** A tour's line string (`GET /routemetadata?routestring=true`). */
export interface LineString {
  type: "LineString";
  coordinates: number[][];
}
