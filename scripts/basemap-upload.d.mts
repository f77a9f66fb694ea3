// Types of scripts/basemap-upload.mjs (used by the browser tests' service).
export declare const BUCKET: string;
export declare const DEFAULT_KEY: string;
export interface ArchiveCheck {
  error?: string;
  minzoom?: number;
  maxzoom?: number;
  bounds?: [number, number, number, number];
  bytes?: number;
}
export declare function checkArchive(file: string): ArchiveCheck;
export declare function uploadBasemap(file: string, o?: { remote?: boolean; key?: string; persistTo?: string; env?: NodeJS.ProcessEnv; quiet?: boolean }): ArchiveCheck;
export declare function removeBasemap(o?: { remote?: boolean; key?: string; persistTo?: string; env?: NodeJS.ProcessEnv }): void;
