import type { LiveEvent } from "../../durable/company";
import type { Env } from "../env";

/** The company's coordinator, addressed by company id. */
export const companyStub = (env: Env, companyId: number) => env.COMPANY.getByName(`company:${companyId}`);

/** Pushes an event to the company's live channel. */
export const publish = (env: Env, companyId: number, event: LiveEvent, driverId?: number | null) =>
  companyStub(env, companyId).broadcast(event, driverId);
