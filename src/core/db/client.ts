import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../context";

/**
 * The drizzle handle of a D1 binding or of a request's D1 session. Built
 * without the schema: the code uses the query builder only, never the
 * relational API whose configuration (a walk of the whole schema, ~0.2 ms)
 * would be rebuilt for every request's session. One per binding or session.
 */
const instances = new WeakMap<D1Database, Db>();

export function createDb(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) {
    db = drizzle(d1);
    instances.set(d1, db);
  }
  return db;
}
