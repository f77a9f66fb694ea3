import { defineConfig } from "drizzle-kit";

// Migrations are generated from the schema into /migrations, where wrangler
// (`wrangler d1 migrations apply`) and the tests read them.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/core/db/schema.ts",
  out: "./migrations",
});
