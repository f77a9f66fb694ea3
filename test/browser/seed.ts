/** Seed data the browser tests share: Berlin places and tomorrow's hours. */

export const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

/** An hour of tomorrow in the companies' zone (Europe/Berlin, +01:00 in winter). */
export const at = (h: number) => `${tomorrow}T${String(h).padStart(2, "0")}:00:00+01:00`;

/** Name, longitude, latitude. */
export const PLACES: [string, number, number][] = [
  ["Café Lindner", 13.4188, 52.4986], ["Buchhandlung Kiez", 13.4326, 52.5451], ["Praxis Dr. Weber", 13.3298, 52.5047], ["Blumen Schulz", 13.4541, 52.5127],
  ["Bäckerei Hoffmann", 13.3777, 52.4871], ["Apotheke am Markt", 13.2871, 52.5368], ["Weinhandel Vogel", 13.4699, 52.4795], ["Atelier Braun", 13.4102, 52.5298],
  ["Schreinerei Koch", 13.3501, 52.5593], ["Feinkost Richter", 13.3142, 52.4788],
];
