// Types of scripts/pmtiles-lib.mjs (imported by the worker and browser tests).
export declare const EXTENT: number;
export declare const DEMO_BOUNDS: [number, number, number, number];
export declare const DEMO_ATTRIBUTION: string;
export interface TileLayer {
  name: string;
  features: { type: 1 | 2 | 3; props: Record<string, string | number>; geometry: number[][][] }[];
}
export declare function encodeTile(layers: TileLayer[]): Uint8Array;
export declare function writePmtiles(
  tiles: { z: number; x: number; y: number; data: Uint8Array }[],
  o: { bounds: [number, number, number, number]; center: [number, number, number]; metadata: object },
): Promise<Uint8Array>;
export declare function tilesOf(bounds: [number, number, number, number], z: number): { z: number; x: number; y: number }[];
export declare function demoArchive(o?: { minzoom?: number; maxzoom?: number }): Promise<Uint8Array>;
