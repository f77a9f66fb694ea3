/**
 * Puts a PMTiles archive where the Worker reads the base map (docs/features/base-map.md): the `UPLOADS`
 * bucket (`dispatch-uploads`) at `basemap/region.pmtiles` (or `MAP_ARCHIVE_KEY`), through
 * `wrangler r2 object put` — locally (Miniflare's R2 under .wrangler/state or `persistTo`) or remotely.
 * The file is checked first: PMTiles v3 of vector tiles (MVT), as the Worker serves nothing else.
 * Used by `npm run operator -- upload-basemap`, `npm run dev` and the browser tests.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync, statSync } from "node:fs";

export const BUCKET = "dispatch-uploads";
export const DEFAULT_KEY = "basemap/region.pmtiles";

/** What the header says, or an error message. */
export function checkArchive(file) {
  const header = Buffer.alloc(127);
  const fd = openSync(file, "r");
  try {
    readSync(fd, header, 0, 127, 0);
  } finally {
    closeSync(fd);
  }
  if (header.subarray(0, 7).toString("latin1") !== "PMTiles") return { error: `${file} is not a PMTiles archive` };
  if (header[7] !== 3) return { error: `${file} is PMTiles version ${header[7]}; the Worker reads version 3 (convert with \`pmtiles convert\`)` };
  if (header[99] !== 1) return { error: `${file} holds tile type ${header[99]}, not vector tiles (MVT)` };
  const e7 = (at) => header.readInt32LE(at) / 1e7;
  return { minzoom: header[100], maxzoom: header[101], bounds: [e7(102), e7(106), e7(110), e7(114)], bytes: statSync(file).size };
}

/**
 * @param {string} file
 * @param {{remote?: boolean, key?: string, persistTo?: string, env?: NodeJS.ProcessEnv, quiet?: boolean}} [o]
 */
export function uploadBasemap(file, o = {}) {
  const info = checkArchive(file);
  if (info.error) throw new Error(info.error);
  const args = ["wrangler", "r2", "object", "put", `${BUCKET}/${o.key ?? DEFAULT_KEY}`, "--file", file, "--content-type", "application/vnd.pmtiles", o.remote ? "--remote" : "--local"];
  if (o.persistTo) args.push("--persist-to", o.persistTo);
  const put = spawnSync("npx", args, { encoding: "utf8", env: { ...(o.env ?? process.env), CI: "true" }, stdio: o.quiet ? "pipe" : "inherit", timeout: 600_000 });
  if (put.status !== 0) throw new Error(`wrangler r2 object put failed: ${put.error ?? ""}${put.stderr ?? ""}${put.stdout ?? ""}`);
  return info;
}

/**
 * Deletes the archive from the bucket (locally unless `remote`): the pages fall back to raster tiles or none on their next load.
 * @param {{remote?: boolean, key?: string, persistTo?: string, env?: NodeJS.ProcessEnv}} [o]
 */
export function removeBasemap(o = {}) {
  const args = ["wrangler", "r2", "object", "delete", `${BUCKET}/${o.key ?? DEFAULT_KEY}`, o.remote ? "--remote" : "--local"];
  if (o.persistTo) args.push("--persist-to", o.persistTo);
  const del = spawnSync("npx", args, { encoding: "utf8", env: { ...(o.env ?? process.env), CI: "true" }, stdio: "pipe", timeout: 120_000 });
  if (del.status !== 0) throw new Error(`wrangler r2 object delete failed: ${del.error ?? ""}${del.stderr ?? ""}${del.stdout ?? ""}`);
}
