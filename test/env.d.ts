import type { Env as WorkerEnv } from "../src/core/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      /** Fuzz suite: requests per kind and operation, and the seed (`npm run fuzz -- --runs N --seed S`). */
      FUZZ_RUNS: string;
      FUZZ_SEED: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/worker/index");
      durableNamespaces: "CompanyCoordinator";
    }
  }
}
