/**
 * Periodic ETA refresh of the routes on the way (from the drivers' latest
 * positions), on the object's alarm, while any route is on the way.
 */
import { createDb } from "../core/db/client";
import { updateEtas } from "../core/services/route-lifecycle";
import { ETA_DUE, arm } from "./alarms";
import { COMPANY_ID, type Host } from "./host";
import type { LiveChannel } from "./live";

/** How often ETAs of routes on the way are recomputed. */
const ETA_REFRESH_MS = 5 * 60_000;

export class EtaRefresh {
  constructor(
    private readonly host: Host,
    private readonly live: LiveChannel,
  ) {}

  /** A route went on the way: refresh in 5 minutes, unless a refresh is due already. */
  async schedule(companyId: number): Promise<void> {
    await this.host.storage.put(COMPANY_ID, companyId);
    if ((await this.host.storage.get<number>(ETA_DUE)) === undefined) {
      await this.host.storage.put(ETA_DUE, Date.now() + ETA_REFRESH_MS);
      await arm(this.host.storage);
    }
  }

  /**
   * Refreshes and stops when no route is on the way. While it is on, every
   * alarm run refreshes (an earlier one for another due time just refreshes early).
   */
  async run(now: number): Promise<void> {
    const due = await this.host.storage.get<number>(ETA_DUE);
    const companyId = await this.host.storage.get<number>(COMPANY_ID);
    if (due === undefined || companyId === undefined) return;
    // A company moving to another shard writes nothing until it is there: the refresh waits a round.
    if ((await this.host.placement()).readOnly) return void (await this.host.storage.put(ETA_DUE, now + ETA_REFRESH_MS));
    const env = await this.host.shardEnv();
    const refreshed = await updateEtas(env, createDb(env.DB), companyId);
    for (const published of refreshed.events) await this.live.broadcast(published);
    if (refreshed.routes.length) await this.host.storage.put(ETA_DUE, now + ETA_REFRESH_MS);
    else await this.host.storage.delete(ETA_DUE);
  }
}
