/** Stylesheets are bundled by esbuild (imported for their side effect). */
declare module "*.css";

/** The one function of topojson-client the map uses (the package ships no types). */
declare module "topojson-client" {
  export function feature(topology: unknown, object: unknown): GeoJSON.FeatureCollection;
}
