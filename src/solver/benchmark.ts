import { cordeauProblem, parseCordeau } from "./cordeau";
import { liLimProblem, parseLiLim } from "./lilim";
import { parseSolomon, solomonProblem } from "./solomon";
import type { Problem } from "./types";

/** The public benchmark formats the solver reads (`benchmarkProblem`). */
export type BenchmarkFormat = "solomon" | "lilim" | "cordeau";

/**
 * Which benchmark format a file is in, from its first two non-blank lines:
 * Li & Lim PDPTW starts with `K Q S` (3 numbers) and then rows of 9
 * numbers; Cordeau MDVRP with `type m n t` (4 numbers) and then a depot's
 * `D Q` (2 numbers); Solomon / Gehring & Homberger with the instance's name
 * and has `VEHICLE`, `CAPACITY` and `CUSTOMER` headings. Undefined for
 * anything else.
 */
export function benchmarkFormat(text: string): BenchmarkFormat | undefined {
  const [first, second] = text
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/).filter((t) => t.length > 0))
    .filter((t) => t.length > 0);
  const numbers = (t: string[] | undefined, count: number) => t?.length === count && t.every((x) => Number.isFinite(Number(x)));
  if (numbers(first, 3) && numbers(second, 9)) return "lilim";
  if (numbers(first, 4) && numbers(second, 2)) return "cordeau";
  if (/\bVEHICLE\b/.test(text) && /\bCAPACITY\b/.test(text) && /\bCUSTOMER\b/.test(text)) return "solomon";
  return undefined;
}

/**
 * A benchmark file as a Problem, its format detected (`benchmarkFormat`);
 * job ids are the file's customer or task ids (and for Cordeau depot ids
 * the file's depot ids). Throws on an unknown format. Cordeau files are
 * solved with `objective: "cost"` (the set's objective is distance alone).
 */
export function benchmarkProblem(text: string): { format: BenchmarkFormat; problem: Problem } {
  const format = benchmarkFormat(text);
  if (format === "lilim") return { format, problem: liLimProblem(parseLiLim(text)) };
  if (format === "cordeau") return { format, problem: cordeauProblem(parseCordeau(text)) };
  if (format === "solomon") return { format, problem: solomonProblem(parseSolomon(text)) };
  throw new Error("unknown instance format: expected Solomon / Gehring & Homberger (VEHICLE and CUSTOMER sections) or Li & Lim PDPTW (a first line \"vehicles capacity speed\", then rows of 9 numbers) or Cordeau MDVRP (a first line \"type m n t\", then \"D Q\" per depot)");
}
