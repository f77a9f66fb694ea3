import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Three projects: the solver is a pure library tested under Node; the pages
// run in headless Chromium (test/browser/chromium.ts) against a local `wrangler dev` (test/browser);
// everything else runs inside workerd with the bindings of wrangler.toml.
export default defineConfig({
  test: {
    // One access line per request or queue message would drown the output; tests that need log lines spy on the console.
    onConsoleLog: (line) => !/^\{"level":"info","msg":"(request|queue message)"/.test(line),
    projects: [
      {
        test: {
          name: "solver",
          include: ["test/solver/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          // Chooses the browser (CHROMIUM_PATH, an installed one, or the npm-shipped one) or fails saying how to get one.
          globalSetup: ["test/browser/global-setup.ts"],
          testTimeout: 90_000,
          hookTimeout: 300_000,
          // Pages react to events within moments; a busy 2-core CI box needs headroom.
          expect: { poll: { timeout: 15_000, interval: 100 } },
        },
      },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // The plugin also reads a developer's .dev.vars (which `npm run dev` creates from
              // .dev.vars.example); every variable set there is pinned here so tests see the same
              // environment on a fresh clone and after `npm run dev`.
              bindings: {
                WEBHOOK_ALLOW_PRIVATE: "false",
                // The base map tests expect no raster server unless they configure one (test/map.test.ts).
                MAP_RASTER_URL: "",
                JWT_SECRET: "test-jwt-secret-0123456789abcdef0123456789abcdef",
                OPERATOR_TOKEN: "test-operator-token",
                // Short solver runs keep the suite fast; quality is measured by the benchmarks.
                ROUTING_TIME_BUDGET_MS: "700",
                // Tests send requests as fast as the machine allows; on a quiet machine that is above the company's
                // 200 per second (a fuzz or latency test then got 429s). The limit's own tests (test/errors.test.ts) set 200.
                RATE_LIMIT_PER_SECOND: "1000000",
                // Plans from 60 deliveries go to consumers in parts of about 20 (test/routing-fanout.test.ts).
                ROUTING_FANOUT_MIN_STOPS: "60",
                ROUTING_FANOUT_PART_STOPS: "20",
                // Two shards (wrangler.toml); tests that reach into D1 directly use env.DB, so companies start
                // on shard 0 unless a test places them (test/shards.test.ts); moves need no grace in one isolate.
                SHARD_FOR_NEW_COMPANIES: "0",
                MOVE_GRACE_SECONDS: "0",
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                // Long fuzz runs: `npm run fuzz -- --runs N --seed S` (scripts/fuzz.mjs) sets these.
                FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
                FUZZ_SEED: process.env.FUZZ_SEED ?? "",
              },
            },
          })),
        ],
        test: {
          name: "worker",
          include: ["test/**/*.test.ts"],
          exclude: ["test/solver/**", "test/browser/**"],
          setupFiles: ["./test/setup.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
