/** Whom a verb acts for: the company (tenant), the authenticated user, and the database handle of the company's shard. */
import type { DrizzleD1Database } from "drizzle-orm/d1";

export type Db = DrizzleD1Database;

export type Role = "dispatcher" | "watcher" | "driver";

export interface Company {
  id: number;
  slug: string;
  companyname: string;
  location_id: number | null;
  timezone: string;
}

export interface AuthUser {
  id: number;
  role: Role;
  companyId: number;
}
