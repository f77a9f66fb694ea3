#!/usr/bin/env node
/**
 * Builds the dispatcher console and the driver app into Workers static
 * assets (`dist/web`, the `[assets]` directory of wrangler.toml):
 *   app/console.html, app/driver.html   the pages' HTML shells (served at /<slug>/console and /<slug>/driver by _redirects)
 *   assets/*.js, *.css                  the bundles (esbuild, Preact, Leaflet)
 *   assets/countries-110m.json          the country outlines of the offline map (world-atlas)
 *   app/driver.webmanifest, app/driver-sw.js, assets/driver-icon.svg
 *                                       the driver app as a PWA (served at /<slug>/driver.webmanifest and /<slug>/driver-sw.js)
 *   _headers                            Content-Security-Policy and friends for every asset
 * The base map is chosen by the pages at runtime (`GET /tiles/map.json`, docs/features/base-map.md); its
 * tiles come from the service's own origin, so the pages load nothing from elsewhere.
 * Prints the gzip size of every file; `--quiet` prints only the total.
 */
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { staticHeaders } from "./static-headers.mjs";

const OUT = "dist/web";

// Written over in place, never removed first: a running wrangler dev or vitest pool may be reading it.
mkdirSync(`${OUT}/app`, { recursive: true });

const pages = {
  outdir: `${OUT}/assets`,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  loader: { ".png": "file", ".svg": "file" },
  legalComments: "linked",
  logLevel: "warning",
};
// The console splits off what it imports on demand (the vector base map's renderer: assets/chunks/*),
// so a deployment without an archive never loads it. The driver app stays one file (its service worker keeps it offline).
// Chunk names carry no hash, so a rebuild overwrites them in place like every other asset (nothing is removed under a running wrangler dev).
await build({ ...pages, entryPoints: { console: "src/web/console/main.tsx" }, splitting: true, chunkNames: "chunks/[name]" });
await build({ ...pages, entryPoints: { driver: "src/web/driver/main.tsx" } });

/** The HTML shell of a page: its stylesheet and module, nothing inline (the CSP allows no inline script or style). `head`: more links. */
const page = (app, title, head = '<link rel="icon" href="data:,">') => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="theme-color" content="#0072b2">
  ${head}
  <title>${title}</title>
  <link rel="stylesheet" href="/assets/${app}.css">
  <script type="module" src="/assets/${app}.js"></script>
</head>
<body>
  <div id="app"></div>
  <noscript>${title} needs JavaScript.</noscript>
</body>
</html>
`;
writeFileSync(`${OUT}/app/console.html`, page("console", "Dispatch console"));
// The manifest's link is relative: from /<slug>/driver it is /<slug>/driver.webmanifest, whose relative start_url and scope are /<slug>/driver.
writeFileSync(`${OUT}/app/driver.html`, page("driver", "Driver", '<link rel="manifest" href="driver.webmanifest">\n  <link rel="icon" href="/assets/driver-icon.svg" type="image/svg+xml">'));
copyFileSync("node_modules/world-atlas/countries-110m.json", `${OUT}/assets/countries-110m.json`);
copyFileSync("src/web/driver/manifest.webmanifest", `${OUT}/app/driver.webmanifest`);
copyFileSync("src/web/driver/icon.svg", `${OUT}/assets/driver-icon.svg`);

// The driver app's service worker names its cache after the shell it keeps, so every change of the shell replaces the cached copy.
const shellVersion = createHash("sha256")
  .update(["app/driver.html", "app/driver.webmanifest", "assets/driver.js", "assets/driver.css", "assets/driver-icon.svg"].map((f) => readFileSync(`${OUT}/${f}`, "utf8")).join("\0"))
  .digest("hex")
  .slice(0, 16);
await build({
  entryPoints: ["src/web/driver/sw.ts"],
  outfile: `${OUT}/app/driver-sw.js`,
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  define: { SHELL_VERSION: JSON.stringify(shellVersion) },
  logLevel: "warning",
});

// The company slug is the first path segment; the pages read it from location.
writeFileSync(
  `${OUT}/_redirects`,
  ["/:slug/console /app/console 200", "/:slug/driver /app/driver 200", "/:slug/driver.webmanifest /app/driver.webmanifest 200", "/:slug/driver-sw.js /app/driver-sw.js 200", ""].join("\n"),
);
writeFileSync(`${OUT}/_headers`, staticHeaders());

const files = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
const sizes = files(OUT)
  .filter((f) => /\.(js|css|html|json|webmanifest|svg)$/.test(f))
  .map((f) => ({ file: f.slice(OUT.length + 1), bytes: statSync(f).size, gzip: gzipSync(readFileSync(f), { level: 9 }).length }));
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
if (!process.argv.includes("--quiet")) for (const s of sizes) console.log(`${s.file.padEnd(32)} ${kb(s.bytes).padStart(10)} ${kb(s.gzip).padStart(10)} gzip`);
console.log(`web build: ${sizes.length} files in ${OUT}, ${kb(sizes.reduce((a, s) => a + s.gzip, 0))} gzip`);
