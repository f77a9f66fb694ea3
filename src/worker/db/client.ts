import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../env";
import * as schema from "./schema";

/**
 * One drizzle instance per D1 binding and isolate: building it walks the
 * whole schema (relational config), which showed up in every request's CPU
 * profile. The instance holds no per-request state.
 */
const instances = new WeakMap<D1Database, Db>();

export function createDb(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    instances.set(d1, db);
  }
  return db;
}
