import type { Env } from "../env";
import { log } from "../lib/log";
import type { PublishedEvent } from "../coordinator/live";

/** The company's coordinator, addressed by company id. */
export const companyStub = (env: Env, companyId: number) => env.COMPANY.getByName(`company:${companyId}`);

/** Pushes an event (logged by the batch of its change, or live only) to the company's live channel and webhooks. */
export const publish = (env: Env, companyId: number, published: PublishedEvent) => companyStub(env, companyId).broadcast(published);

/**
 * Pushes the events of a change in log order, one after the other. A failure
 * is logged, not thrown: the change is done, and its logged events reach the
 * webhooks through the sweep and reconnecting clients through `resume`.
 */
export async function publishAll(env: Env, companyId: number, published: PublishedEvent[]) {
  try {
    for (const p of published) await publish(env, companyId, p);
  } catch (err) {
    log("error", "publishing events failed", { company_id: companyId, event_ids: published.map((p) => p.eventId ?? null), error: err });
  }
}
