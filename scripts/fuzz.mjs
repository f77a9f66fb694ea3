#!/usr/bin/env node
/**
 * Long fuzz runs: `npm run fuzz -- --runs N [--seed S]` runs test/fuzz.test.ts
 * with N requests of each kind per operation (the suite uses 2) and
 * test/spreadsheet-fuzz.test.ts with 25 x N damaged archives of each kind,
 * both with the seed S.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" }, seed: { type: "string" } } });
const env = { ...process.env, FUZZ_RUNS: values.runs, ...(values.seed ? { FUZZ_SEED: values.seed } : {}) };
const run = spawnSync("npx", ["vitest", "run", "--project", "worker", "test/fuzz.test.ts", "test/spreadsheet-fuzz.test.ts"], { stdio: "inherit", env });
process.exit(run.status ?? 1);
