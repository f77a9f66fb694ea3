import { type Placement, envForCompany, placementOf } from "../core/db/shards";
import type { Env } from "../core/env";

/**
 * What every concern of the coordinator works with: the object's state and
 * bindings, and the company it serves.
 */
export class Host {
  private knownCompanyId?: number;

  constructor(
    readonly ctx: DurableObjectState,
    readonly env: Env,
  ) {}

  get storage(): DurableObjectStorage {
    return this.ctx.storage;
  }

  /**
   * The company this object serves: its name is `company:<id>`. Calls through
   * a stub carry the name; a woken hibernated socket may not, so it is kept
   * in storage as well. Undefined for an object not named after a company.
   */
  async companyId(): Promise<number | undefined> {
    const named = Number(this.ctx.id.name?.split(":")[1]);
    if (Number.isInteger(named) && named > 0) {
      if (this.knownCompanyId !== named) await this.storage.put(COMPANY_ID, named);
      return (this.knownCompanyId = named);
    }
    return (this.knownCompanyId ??= await this.storage.get<number>(COMPANY_ID));
  }

  /**
   * The bindings with `DB` naming the company's shard (db/shards.ts; the placement
   * is cached for a minute, which a move between shards waits out). Every D1 query
   * of the object goes through this, never through `env.DB` directly.
   */
  async shardEnv(): Promise<Env> {
    const companyId = await this.companyId();
    return companyId === undefined ? this.env : envForCompany(this.env, companyId);
  }

  /** Where the company lives and whether it is moving (read-only): what writes on their own (alarms) ask first. */
  async placement(): Promise<Placement> {
    const companyId = await this.companyId();
    return companyId === undefined ? { shard: 0, readOnly: false } : placementOf(this.env, companyId);
  }

  /** Deletes keys in batches of 128, the most one call takes. */
  async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 128) await this.storage.delete(keys.slice(i, i + 128));
  }
}

/** Storage key of the company id (src/durable/README.md lists every key). */
export const COMPANY_ID = "companyId";
