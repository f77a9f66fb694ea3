/**
 * A local service for the browser tests: fresh D1/DO state in a temporary
 * directory, migrations applied, `wrangler dev` (with the built static
 * assets of dist/web) on a free port, and a company seeded through the
 * operator and public API, as scripts/dev.mjs does.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeBasemap, uploadBasemap } from "../../scripts/basemap-upload.mjs";
import { demoArchive } from "../../scripts/pmtiles-lib.mjs";

const OPERATOR_TOKEN = "browser-test-operator-token";
const JWT_SECRET = "browser-test-jwt-secret-0123456789abcdef0123456789";

export interface Service {
  base: string;
  slug: string;
  stop(): Promise<void>;
  /** A call to the public API (`/<slug>/api...`) or `/<slug>/auth`; throws on a non-2xx answer. */
  call<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<T>;
  operator<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Deletes the base map's archive from the service's local R2 bucket while it runs. */
  removeBasemap(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** Signals the process group of `wrangler dev` (wrangler and its workerd); false when none of it is left. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface ServiceOptions {
  /** Put the made-up demo region's PMTiles archive into the local R2 bucket first (the base map's vector mode), as `npm run dev` does. */
  basemap?: boolean;
  /** More Worker variables (`--var`), e.g. `MAP_RASTER_URL`. */
  vars?: Record<string, string>;
}

export async function startService(slug: string, options: ServiceOptions = {}): Promise<Service> {
  // The slug in the folder's name lets a test find what one start left behind.
  const state = mkdtempSync(join(tmpdir(), `dispatch-browser-${slug}-`));
  let dev: ChildProcess | undefined;
  /** Stops everything this start made, whatever step it reached. */
  const stop = async () => {
    if (dev?.pid !== undefined && signalGroup(dev.pid, "SIGTERM")) {
      const exited = new Promise((r) => (dev!.exitCode === null ? dev!.once("exit", r) : r(null)));
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      // workerd may outlive wrangler; nothing of the group may stay.
      for (let i = 0; i < 20 && signalGroup(dev.pid, "SIGKILL"); i++) await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(state, { recursive: true, force: true });
  };
  try {
    const env = { ...process.env, CI: "true", NO_COLOR: "1" };
    // Both shards (wrangler.toml); companies are spread over them (the least-loaded rule), as deployed.
    for (const shard of ["DB", "DB_SHARD_1"]) {
      const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", shard, "--local", "--persist-to", state], { env, encoding: "utf8", timeout: 180_000 });
      if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.error ?? ""}${migrate.stderr}${migrate.stdout}`);
    }
    if (options.basemap) {
      const file = join(state, "demo.pmtiles");
      writeFileSync(file, await demoArchive());
      uploadBasemap(file, { persistTo: state, env, quiet: true });
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const vars = { JWT_SECRET, OPERATOR_TOKEN, ROUTING_TIME_BUDGET_MS: "1000", ...options.vars };
    const child = spawn(
      "npx",
      ["wrangler", "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, "--show-interactive-dev-session=false", ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`])],
      { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    dev = child;
    let log = "";
    child.stdout!.on("data", (d) => (log += d));
    child.stderr!.on("data", (d) => (log += d));
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/openapi.json`)).ok) break;
      } catch {
        // not up yet
      }
      if (i > 240 || child.exitCode !== null) throw new Error(`wrangler dev did not come up:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return service(base, slug, stop, () => removeBasemap({ persistTo: state, env }));
  } catch (e) {
    await stop();
    throw e;
  }
}

function service(base: string, slug: string, stop: () => Promise<void>, removeBasemap: () => void): Service {
  const request = async (method: string, url: string, authorization: string | undefined, body: unknown) => {
    const res = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(authorization ? { authorization } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return {
    base,
    slug,
    stop,
    removeBasemap,
    call: (method, path, body, token) => request(method, `${base}/${slug}${path}`, token ? `JWT ${token}` : undefined, body),
    operator: (method, path, body) => request(method, `${base}/_operator${path}`, `Bearer ${OPERATOR_TOKEN}`, body),
  };
}
