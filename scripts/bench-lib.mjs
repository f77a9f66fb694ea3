/**
 * Shared by the service benchmarks: a local `wrangler dev` on fresh state in a
 * temporary folder (migrations applied, `state` its path), JSON calls, bench companies.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const OPERATOR_TOKEN = "bench-operator";
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the service. `vars` are extra `--var NAME:value` settings;
 * `config` rewrites the text of wrangler.toml for this run (the rewritten
 * copy lives in the state folder, its paths made absolute: main, migrations,
 * assets, and the build runs in the repository). `pid` is the process
 * group of `wrangler dev` (wrangler and its workerd). `inspectorPort`
 * opens the devtools protocol (CPU profiles); `args` are more `wrangler dev`
 * arguments.
 */
export async function startService({ port, vars = {}, config, inspectorPort, args = [] } = {}) {
  const base = `http://127.0.0.1:${port}`;
  const state = mkdtempSync(join(tmpdir(), "dispatch-bench-"));
  let configPath = resolve("wrangler.toml");
  if (config) {
    const text = config(readFileSync(configPath, "utf8"))
      .replace(/^main = "(.+)"$/m, (_, p) => `main = ${JSON.stringify(resolve(p))}`)
      .replace(/^migrations_dir = "(.+)"$/gm, (_, p) => `migrations_dir = ${JSON.stringify(resolve(p))}`)
      .replace(/^(directory|watch_dir) = "(.+)"$/gm, (_, key, p) => `${key} = ${JSON.stringify(resolve(p))}`)
      .replace(/^\[build\]$/m, `[build]\ncwd = ${JSON.stringify(resolve("."))}`);
    configPath = join(state, "wrangler.toml");
    writeFileSync(configPath, text);
  }
  // Bench companies stay on the first shard, where `sql` seeds its fixtures.
  const allVars = { JWT_SECRET: "bench-secret-0123456789abcdef0123456789", OPERATOR_TOKEN, SHARD_FOR_NEW_COMPANIES: "0", ...vars };
  const varArgs = Object.entries(allVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const common = ["--config", configPath, "--persist-to", state];
  for (const shard of ["DB", "DB_SHARD_1"]) {
    const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", shard, "--local", ...common], { stdio: "ignore", env: { ...process.env, CI: "true" } });
    if (migrate.status !== 0) throw new Error("migrations failed");
  }
  const inspector = inspectorPort ? ["--inspector-port", String(inspectorPort)] : [];
  const dev = spawn("npx", ["wrangler", "dev", "--ip", "127.0.0.1", "--port", String(port), ...inspector, ...args, ...common, ...varArgs], { stdio: "ignore", detached: true });
  const stop = () => {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {
      // already gone
    }
    rmSync(state, { recursive: true, force: true });
  };
  process.on("exit", stop);
  // Ctrl-C and kill end the run through the exit handler, so wrangler dev does not outlive it.
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/openapi.json`)).ok) break;
    } catch {
      if (i > 120) throw new Error("wrangler dev did not start");
    }
    await sleep(500);
  }

  /** Runs SQL against the service's local D1 (fixtures too large to create through the API). */
  const sql = (statements) => {
    const file = join(state, `seed-${Date.now()}.sql`);
    writeFileSync(file, statements);
    const run = spawnSync("npx", ["wrangler", "d1", "execute", "DB", "--local", ...common, "--file", file], { encoding: "utf8", env: { ...process.env, CI: "true" } });
    if (run.status !== 0) throw new Error(`d1 execute failed: ${run.stderr || run.stdout}`);
  };

  async function call(method, path, { body, token, operator, headers: extra = {} } = {}) {
    const headers = { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `JWT ${token}` } : {}), ...(operator ? { authorization: `Bearer ${OPERATOR_TOKEN}` } : {}), ...extra };
    const send = () => fetch(`${base}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    // A kept-alive socket the server closed while idle (e.g. during a long seed) fails once; a GET, or a request with an Idempotency-Key, may simply be sent again.
    const res = await send().catch((err) => (method === "GET" || headers["Idempotency-Key"] ? send() : Promise.reject(err)));
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  let companies = 0;
  /** A fresh company with a depot in Berlin and its dispatcher's token. */
  async function company() {
    const slug = `bench-${++companies}`;
    const email = `boss@${slug}.example`;
    const created = await call("POST", "/_operator/companies", {
      operator: true,
      body: { slug, companyname: slug, depot: { city: "Berlin", lat: 52.5317, lng: 13.3849 }, dispatcher: { email, password: "bench password" } },
    });
    if (created.status !== 201) throw new Error(`company: ${created.status} ${JSON.stringify(created.body)}`);
    const { body } = await call("POST", `/${slug}/auth`, { body: { email, password: "bench password" } });
    return { slug, id: created.body.id, token: body.access_token };
  }

  /** A confirmed user of the company, logged in. */
  async function user(slug, usertype, email) {
    const created = await call("POST", `/_operator/companies/${slug}/users`, { operator: true, body: { usertype, email, password: "bench password" } });
    if (created.status !== 201) throw new Error(`user: ${created.status} ${JSON.stringify(created.body)}`);
    const { body } = await call("POST", `/${slug}/auth`, { body: { email, password: "bench password" } });
    return { id: created.body.id, token: body.access_token };
  }

  return { base, call, company, user, sql, stop, state, pid: dev.pid };
}
