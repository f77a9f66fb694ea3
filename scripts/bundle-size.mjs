#!/usr/bin/env node
/**
 * The Worker's deploy bundle against its budget (docs/operations/deploy.md, "Deploy size"):
 * builds exactly what `wrangler deploy` would upload (`--dry-run --outdir`,
 * offline, no account), prints its size raw and gzip (as wrangler counts it:
 * every module gzipped, source maps aside) and exits 1 when the gzip size is
 * over the budget, so a dependency that bloats the Worker is seen the day it
 * lands (`.ci/run` runs it). The static assets of dist/web are uploaded
 * separately and not counted here (`npm run build:web` prints theirs).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** KiB gzip. Measured 399 KiB on 2026-11-26; Workers allow 3 MiB (free) and 10 MiB (paid) gzip. */
const BUDGET_KIB = 450;

const out = mkdtempSync(join(tmpdir(), "dispatch-bundle-"));
try {
  const dry = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", out], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  if (dry.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${dry.stdout}${dry.stderr}`);
  const modules = readdirSync(out).filter((f) => !f.endsWith(".map") && f !== "README.md");
  const kib = (bytes) => bytes / 1024;
  const raw = modules.reduce((sum, f) => sum + readFileSync(join(out, f)).length, 0);
  const gzip = modules.reduce((sum, f) => sum + gzipSync(readFileSync(join(out, f))).length, 0);
  const over = kib(gzip) > BUDGET_KIB;
  console.log(
    `Worker bundle: ${kib(gzip).toFixed(1)} KiB gzip (${kib(raw).toFixed(1)} KiB raw, ${modules.length} module${modules.length === 1 ? "" : "s"}); budget ${BUDGET_KIB} KiB gzip: ${over ? "OVER BUDGET" : "ok"}`,
  );
  if (over) process.exitCode = 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
