import type { Env } from "../env";
import type { PublishedEvent } from "./events";

/** The company's coordinator, addressed by company id. */
export const companyStub = (env: Env, companyId: number) => env.COMPANY.getByName(`company:${companyId}`);

/** Pushes an event (logged by the batch of its change, or live only) to the company's live channel and webhooks. */
export const publish = (env: Env, companyId: number, published: PublishedEvent) => companyStub(env, companyId).broadcast(published);

/** Pushes the events of a change in log order, one after the other. */
export async function publishAll(env: Env, companyId: number, published: PublishedEvent[]) {
  for (const p of published) await publish(env, companyId, p);
}
