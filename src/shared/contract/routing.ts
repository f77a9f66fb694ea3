/** One plan of POST /routingvariants, as answered. */
export interface RoutingVariant {
  name: "fewest_tours" | "shorter_days" | "one_more_tour";
  description: string;
  tours: number;
  /** Metres. */
  distance: number;
  /** Seconds, all tours together. */
  duration: number;
  /** Seconds. */
  longest_tour: number;
  /** Seconds. */
  waiting: number;
  unassigned: number[];
  /** Delivery ids per tour in driving order. */
  sequences: number[][];
}

/** One running route priced for a delivery by POST /calcroute/insert. */
export interface InsertionCandidate {
  route_id: number;
  custom_id: string | null;
  status: number;
  driver_id: number | null;
  feasible: boolean;
  /** Metres the delivery adds to the tour (feasible only). */
  added_distance: number | null;
  /** What it adds to the tour's cost (the vehicle's rates; by default kilometres). */
  added_cost: number | null;
  /** Its position on the new tour (1 = first) and planned service start. */
  orderindex: number | null;
  tdt: string | null;
  /** Why the route cannot take it, with the remedy. */
  reason: string | null;
}

/** Where POST /calcroute/insert put a delivery (or, in a dry run, would). */
export interface DeliveryInsertion {
  delivery_id: number;
  /** The route chosen (the cheapest feasible), null when none can take it. */
  route_id: number | null;
  /** The route that replaces it (null in a dry run). */
  new_route_id: number | null;
  candidates: InsertionCandidate[];
}
