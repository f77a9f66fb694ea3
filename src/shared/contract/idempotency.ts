/** Request header naming a POST or PATCH so that a repeat does the work once (docs/features/idempotency.md). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Answer header of a repeat that got the first request's stored answer. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
