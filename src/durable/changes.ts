/**
 * Route and delivery state changes (contract.md §5), one at a time per
 * company. The logic is src/core/services/route-lifecycle.ts.
 */
import { createDb } from "../core/db/client";
import type { LifecycleOp, LifecycleOutcome } from "../core/coordinator/changes";
import { RouteStatus } from "../shared/contract/states";
import { storeRouteReports } from "../core/services/day-report";
import { applyLifecycleOp } from "../core/services/route-lifecycle";
import type { EtaRefresh } from "./eta-refresh";
import type { Host } from "./host";
import type { LiveChannel } from "./live";

export class ChangeQueue {
  /** Tail of the queue of state changes: each waits for the previous one. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly host: Host,
    private readonly live: LiveChannel,
    private readonly etas: EtaRefresh,
  ) {}

  /**
   * Applies a change after the previous one: the change awaits D1, which
   * would otherwise let calls interleave between its check and its write.
   * Then tells the live channel.
   */
  async apply(op: LifecycleOp): Promise<LifecycleOutcome> {
    const run = this.tail.then(async () => {
      const env = await this.host.shardEnv();
      return applyLifecycleOp(env, createDb(env.DB), op);
    });
    this.tail = run.catch(() => undefined);
    const outcome = await run;
    if (outcome.ok) {
      for (const published of outcome.events) await this.live.broadcast(published);
      // A route went on the way: keep its ETAs fresh while any route is on the way.
      if (outcome.events.some(({ event }) => event.type === "route" && event.status === RouteStatus.ontheway)) await this.etas.schedule(op.company.id);
      // A route finished: its day-report figures, once (after the queue moved on: the next change does not wait for them).
      const finished = outcome.events.flatMap(({ event }) => (event.type === "route" && event.status === RouteStatus.finished ? [event.id] : []));
      if (finished.length) {
        const env = await this.host.shardEnv();
        await storeRouteReports(env, createDb(env.DB), op.company, finished);
      }
    }
    return outcome;
  }
}
