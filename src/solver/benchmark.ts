import { liLimProblem, parseLiLim } from "./lilim";
import { parseSolomon, solomonProblem } from "./solomon";
import type { Problem } from "./types";

/** The public benchmark formats the solver reads (`benchmarkProblem`). */
export type BenchmarkFormat = "solomon" | "lilim";

/**
 * Which benchmark format a file is in, from its first two non-blank lines:
 * Li & Lim PDPTW starts with `K Q S` (3 numbers) and then rows of 9
 * numbers; Solomon / Gehring & Homberger with the instance's name and has
 * `VEHICLE`, `CAPACITY` and `CUSTOMER` headings. Undefined for anything
 * else (e.g. a Cordeau MDVRP file, whose first line has 4 numbers).
 */
export function benchmarkFormat(text: string): BenchmarkFormat | undefined {
  const [first, second] = text
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/).filter((t) => t.length > 0))
    .filter((t) => t.length > 0);
  const numbers = (t: string[] | undefined, count: number) => t?.length === count && t.every((x) => Number.isFinite(Number(x)));
  if (numbers(first, 3) && numbers(second, 9)) return "lilim";
  if (/\bVEHICLE\b/.test(text) && /\bCAPACITY\b/.test(text) && /\bCUSTOMER\b/.test(text)) return "solomon";
  return undefined;
}

/**
 * A benchmark file as a Problem, its format detected (`benchmarkFormat`);
 * job ids are the file's customer or task ids. Throws on an unknown format.
 */
export function benchmarkProblem(text: string): { format: BenchmarkFormat; problem: Problem } {
  const format = benchmarkFormat(text);
  if (format === "lilim") return { format, problem: liLimProblem(parseLiLim(text)) };
  if (format === "solomon") return { format, problem: solomonProblem(parseSolomon(text)) };
  throw new Error("unknown instance format: expected Solomon / Gehring & Homberger (VEHICLE and CUSTOMER sections) or Li & Lim PDPTW (a first line \"vehicles capacity speed\", then rows of 9 numbers)");
}
