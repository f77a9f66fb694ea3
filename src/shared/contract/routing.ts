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
