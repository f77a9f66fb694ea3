/**
 * The layers of src/ (README "Architecture"), checked by `npm run lint:deps`
 * (part of `npm test`): each part imports only the parts below it, and no
 * module imports itself back through any chain, type-only imports included.
 *
 *   src/worker   the HTTP edge, queue and cron entry points
 *   src/durable  the per-company coordinator (Durable Object)
 *   src/core     the domain both stand on (verbs, db, rules, the coordinator's interface)
 *   src/solver, src/shared   pure libraries; src/web the pages
 */
const OUTSIDE = (part) => `^src/(?!${part}/)`;

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle ties its modules into one unit that cannot change or load apart.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "core-stands-below-both",
      severity: "error",
      comment: "The domain imports only src/solver and src/shared: the edge and the coordinator stand on it, never the reverse.",
      from: { path: "^src/core/" },
      to: { path: "^src/(worker|durable|web)/" },
    },
    {
      name: "core-knows-no-http",
      severity: "error",
      comment: "Verbs take and return plain domain types; the HTTP framework and its zod schemas belong to src/worker.",
      from: { path: "^src/core/" },
      to: { path: "^node_modules/(hono|@hono)/" },
    },
    {
      name: "durable-on-core",
      severity: "error",
      comment: "The coordinator runs the core's verbs; it never reaches into the edge, the pages or the solver.",
      from: { path: "^src/durable/" },
      to: { path: "^src/(worker|web|solver)/" },
    },
    {
      name: "edge-sees-the-coordinator-interface",
      severity: "error",
      comment: "The edge calls the coordinator through CompanyCoordinatorRpc (src/core/coordinator); only the entry point exports the class for the runtime.",
      from: { path: "^src/worker/", pathNot: "^src/worker/index\\.ts$" },
      to: { path: "^src/durable/" },
    },
    {
      name: "edge-on-core",
      severity: "error",
      comment: "The edge reaches the solver and the pages only through the core (or src/shared).",
      from: { path: "^src/worker/" },
      to: { path: "^src/(solver|web)/" },
    },
    {
      name: "entry-exports-only-the-class",
      severity: "error",
      comment: "src/worker/index.ts re-exports the Durable Object class and nothing else of src/durable.",
      from: { path: "^src/worker/index\\.ts$" },
      to: { path: "^src/durable/", pathNot: "^src/durable/company\\.ts$" },
    },
    {
      name: "solver-is-pure",
      severity: "error",
      comment: "The route optimiser is a library that runs under Node and in the queue consumer: it imports nothing of the service.",
      from: { path: "^src/solver/" },
      to: { path: OUTSIDE("solver") },
    },
    {
      name: "shared-is-pure",
      severity: "error",
      comment: "Wire shapes and pure helpers the pages and the worker both import: they import nothing else of src/.",
      from: { path: "^src/shared/" },
      to: { path: OUTSIDE("shared") },
    },
    {
      name: "pages-on-shared",
      severity: "error",
      comment: "The pages are bundled for browsers: they share only src/shared with the worker.",
      from: { path: "^src/web/" },
      to: { path: "^src/(?!web/|shared/)" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "An import the cruiser cannot resolve would escape every rule above.",
      from: { path: "^src/" },
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript compiler API; swc parses TypeScript here. It reports type-only
    // imports as dependencies too ("type-only"), so a circle of types fails like any other.
    parser: "swc",
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.d\\.ts$" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".mts", ".js", ".mjs", ".d.ts"],
      exportsFields: ["exports"],
      conditionNames: ["types", "import", "workerd", "worker", "browser", "default"],
      mainFields: ["types", "typings", "module", "main"],
    },
  },
};
