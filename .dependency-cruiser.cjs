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
/** A forbidden import: `from` may not import `to` (paths as regular expressions; `pathNot` narrows either side). */
const never = (name, comment, from, to) => ({ name, severity: "error", comment, from, to });

module.exports = {
  forbidden: [
    never("no-circular", "An import circle ties its modules into one unit that cannot change or load apart.", { path: "^src/" }, { circular: true }),
    never(
      "core-stands-below-both",
      "The domain imports only src/solver and src/shared: the edge and the coordinator stand on it, never the reverse.",
      { path: "^src/core/" },
      { path: "^src/(worker|durable|web)/" },
    ),
    never(
      "core-knows-no-http",
      "Verbs take and return plain domain types; the HTTP framework and its zod schemas belong to src/worker.",
      { path: "^src/core/" },
      { path: "^node_modules/(hono|@hono)/" },
    ),
    never("durable-on-core", "The coordinator runs the core's verbs; it never reaches into the edge, the pages or the solver.", { path: "^src/durable/" }, { path: "^src/(worker|web|solver)/" }),
    never(
      "edge-sees-the-coordinator-interface",
      "The edge calls the coordinator through CompanyCoordinatorRpc (src/core/coordinator); only the entry point exports the class for the runtime.",
      { path: "^src/worker/", pathNot: "^src/worker/index\\.ts$" },
      { path: "^src/durable/" },
    ),
    never(
      "entry-exports-only-the-class",
      "src/worker/index.ts re-exports the Durable Object class and nothing else of src/durable.",
      { path: "^src/worker/index\\.ts$" },
      { path: "^src/durable/", pathNot: "^src/durable/company\\.ts$" },
    ),
    never(
      "edge-runs-no-queries",
      "Handlers call the core's verbs; the tables and the query builder stay below the edge.",
      { path: "^src/worker/" },
      { path: ["^node_modules/drizzle-orm/", "^src/core/db/schema\\.ts$"] },
    ),
    never("edge-on-core", "The edge reaches the solver and the pages only through the core (or src/shared).", { path: "^src/worker/" }, { path: "^src/(solver|web)/" }),
    never(
      "solver-is-pure",
      "The route optimiser is a library that runs under Node and in the queue consumer: it imports nothing of the service.",
      { path: "^src/solver/" },
      { path: OUTSIDE("solver") },
    ),
    never("shared-is-pure", "Wire shapes and pure helpers the pages and the worker both import: they import nothing else of src/.", { path: "^src/shared/" }, { path: OUTSIDE("shared") }),
    never("pages-on-shared", "The pages are bundled for browsers: they share only src/shared with the worker.", { path: "^src/web/" }, { path: "^src/(?!web/|shared/)" }),
    never("no-unresolvable", "An import the cruiser cannot resolve would escape every rule above.", { path: "^src/" }, { couldNotResolve: true, pathNot: "^cloudflare:" }),
  ],
  options: {
    // TypeScript 7 has no JavaScript compiler API; swc parses TypeScript here. It reports type-only
    // imports as dependencies too ("type-only"), so a circle of types fails like any other.
    parser: "swc",
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/.*\\.d\\.ts$" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".mts", ".js", ".mjs", ".d.ts"],
      exportsFields: ["exports"],
      conditionNames: ["workerd", "worker", "browser", "import", "require", "node", "default"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
