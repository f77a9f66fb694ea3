import { applyD1Migrations, env } from "cloudflare:test";

// Every test file starts from the migrated schema on both shards (storage is isolated per file).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await applyD1Migrations(env.DB_SHARD_1!, env.TEST_MIGRATIONS);
