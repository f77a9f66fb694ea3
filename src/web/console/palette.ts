/** Okabe–Ito: distinguishable with the common colour-vision deficiencies (yellow last: weakest on white). The map's routes and the report's charts. */
export const PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#F0E442"];

/** Named Okabe–Ito colours for charts: each meaning keeps its colour everywhere. */
export const OKABE_ITO = { orange: "#E69F00", sky: "#56B4E9", green: "#009E73", blue: "#0072B2", vermillion: "#D55E00", purple: "#CC79A7", black: "#000000" } as const;
