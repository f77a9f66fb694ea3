// Types of scripts/gazetteer-lib.mjs (imported by the tests in test/geo).
export type Position = number[];
export type Ring = Position[];
/** Polygons as arrays of rings: first ring outer, others holes. */
export type Polygons = Ring[][];
export declare function placeKey(name: string): string;
export declare function matchKeys(name: string): string[];
export declare function hyphenKey(name: string): string | null;
export declare function haversine(lng1: number, lat1: number, lng2: number, lat2: number): number;
export declare function ringArea(ring: Ring): number;
export declare function clipRingConvex(subject: Ring, clip: Ring): Ring;
export declare function clipPolygonsConvex(polygons: Polygons, convex: Ring): Polygons;
export declare function pointInRing(x: number, y: number, ring: Ring): boolean;
export declare function pointInPolygons(x: number, y: number, polygons: Polygons): boolean;
export declare function spiral(lng: number, lat: number, n: number, radiusKm: number): Position[];
export declare function cityLayout(lng: number, lat: number, codes: string[], km2PerCode: number): Position[];
