/**
 * A company's move between shards copies the tables MOVED_TABLES names: a table
 * of company data missing there would be left behind on the old shard (and
 * deleted with it). Every table with a `company_id` column must be listed, and
 * every such table with AUTOINCREMENT ids must take its ids from the shard's
 * block (SEQUENCED_TABLES), or two shards hand out the same ids and a moved
 * company's rows collide with the target's.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SEQUENCED_TABLES, MOVED_TABLES } from "../src/core/db/company-tables";

describe("company move", () => {
  it("copies every table that holds company rows, whose AUTOINCREMENT ids come from the shard's block", async () => {
    const tables = await env.DB.prepare("select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '_cf_%' and name not like 'd1_%'").all<{ name: string; sql: string }>();
    const withCompany: string[] = [];
    const sequenced: string[] = [];
    for (const { name, sql } of tables.results) {
      const columns = await env.DB.prepare(`select name from pragma_table_info(?)`).bind(name).all<{ name: string }>();
      if (columns.results.some((c) => c.name === "company_id") && name !== "company_directory") {
        withCompany.push(name);
        if (/autoincrement/i.test(sql)) sequenced.push(name);
      }
    }
    expect(withCompany.length).toBeGreaterThan(10);
    expect(withCompany.filter((t) => !(MOVED_TABLES as readonly string[]).includes(t))).toEqual([]);
    expect(sequenced.length).toBeGreaterThan(10);
    expect(sequenced.filter((t) => !(SEQUENCED_TABLES as readonly string[]).includes(t))).toEqual([]);
  });
});
