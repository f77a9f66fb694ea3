/**
 * An optional road engine compatible with OSRM's HTTP API (`ROAD_ENGINE_URL`):
 * travel matrices from its `table` service for the solver, and road geometry
 * from its `route` service for `routestring`. Without the setting, or when
 * the engine fails, the embedded great-circle model is used.
 */
import { type MatrixProvider, type Problem, type TravelMatrix, type VehicleClassId, prepareMatrices } from "../../solver";
import type { Env } from "../env";
import { log } from "../lib/log";

type Location = { lat: number; lon: number };

/** OSRM profile per vehicle class (OSRM ships no truck profile: trucks use `driving` unless the engine serves one). */
const PROFILES: Record<VehicleClassId, string> = { car: "driving", truck: "driving", bicycle: "cycling" };

export interface RoadEngine {
  matrices: MatrixProvider;
  /** Road geometry through the points ([lng, lat] pairs), or null when the engine cannot answer. */
  geometry(coordinates: number[][]): Promise<number[][] | null>;
  /** Seconds of each leg of a drive through the points in order (one fewer than the points), or null when the engine cannot answer. */
  legs(points: Location[], vehicleClass: VehicleClassId): Promise<number[] | null>;
}

type EngineEnv = Pick<Env, "ROAD_ENGINE_URL" | "ROAD_ENGINE_MAX_TABLE">;

/** How long one request to the engine may take before it is given up. */
const REQUEST_TIMEOUT_MS = 15_000;

/** Points per side of one `table` request (OSRM's max-table-size). */
const tableBlock = (env: EngineEnv) => Math.max(2, Number(env.ROAD_ENGINE_MAX_TABLE) || 100);

/**
 * The longest the road engine may keep a routing run waiting: the matrix of
 * `points` in blocks for each vehicle class and one geometry per tour, one
 * request after the other, each up to its timeout. 0 without an engine.
 */
export function roadEngineMaxMs(env: EngineEnv, { points, vehicleClasses, tours }: { points: number; vehicleClasses: number; tours: number }): number {
  if (!env.ROAD_ENGINE_URL) return 0;
  const blocks = Math.ceil(points / tableBlock(env));
  return (blocks * blocks * vehicleClasses + tours) * REQUEST_TIMEOUT_MS;
}

export function roadEngine(env: EngineEnv, fetcher: typeof fetch = fetch): RoadEngine | null {
  const base = env.ROAD_ENGINE_URL?.replace(/\/$/, "");
  if (!base) return null;
  const block = tableBlock(env);
  const get = async (url: string) => {
    const res = await fetcher(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`road engine answered ${res.status}`);
    const body = (await res.json()) as { code?: string };
    if (body.code && body.code !== "Ok") throw new Error(`road engine: ${body.code}`);
    return body;
  };
  const coords = (points: Location[]) => points.map((p) => `${p.lon.toFixed(6)},${p.lat.toFixed(6)}`).join(";");

  return {
    matrices: {
      /** The full matrix in blocks of at most `block` sources x `block` destinations (OSRM's max-table-size). */
      async matrix(points, vehicleClass) {
        const n = points.length;
        const distances = new Float32Array(n * n);
        const durations = new Float32Array(n * n);
        for (let from = 0; from < n; from += block) {
          for (let to = 0; to < n; to += block) {
            const sources = points.slice(from, from + block);
            const targets = points.slice(to, to + block);
            const all = [...sources, ...targets];
            const query = `sources=${sources.map((_, i) => i).join(";")}&destinations=${targets.map((_, i) => sources.length + i).join(";")}&annotations=duration,distance`;
            const body = (await get(`${base}/table/v1/${PROFILES[vehicleClass]}/${coords(all)}?${query}`)) as { durations: (number | null)[][]; distances: (number | null)[][] };
            for (let i = 0; i < sources.length; i++) {
              for (let j = 0; j < targets.length; j++) {
                const duration = body.durations?.[i]?.[j];
                const distance = body.distances?.[i]?.[j];
                if (duration === null || duration === undefined || distance === null || distance === undefined) throw new Error("road engine left a pair unroutable");
                durations[(from + i) * n + to + j] = duration;
                distances[(from + i) * n + to + j] = distance;
              }
            }
          }
        }
        return { size: n, distances, durations } satisfies TravelMatrix;
      },
    },
    async geometry(coordinates) {
      try {
        const points = coordinates.map(([lon, lat]) => ({ lon, lat }));
        const body = (await get(`${base}/route/v1/driving/${coords(points)}?overview=full&geometries=geojson`)) as { routes?: { geometry?: { coordinates?: number[][] } }[] };
        return body.routes?.[0]?.geometry?.coordinates ?? null;
      } catch (err) {
        log("warn", "road engine geometry failed; straight lines instead", { error: err });
        return null;
      }
    },
    async legs(points, vehicleClass) {
      try {
        const body = (await get(`${base}/route/v1/${PROFILES[vehicleClass]}/${coords(points)}?overview=false`)) as { routes?: { legs?: { duration?: number }[] }[] };
        const legs = body.routes?.[0]?.legs?.map((l) => l.duration);
        if (!legs || legs.length !== points.length - 1 || legs.some((d) => typeof d !== "number")) throw new Error("road engine answered no legs");
        return legs as number[];
      } catch (err) {
        log("warn", "road engine legs failed; the embedded model instead", { error: err });
        return null;
      }
    },
  };
}

/** The problem with road-engine matrices when one is configured and answers; the embedded model otherwise. */
export async function withRoadMatrices(engine: RoadEngine | null, problem: Problem): Promise<Problem> {
  if (!engine) return problem;
  try {
    return await prepareMatrices(problem, engine.matrices);
  } catch (err) {
    // Without matrices the solver uses its embedded great-circle model.
    log("warn", "road engine matrix failed; great-circle model instead", { error: err });
    return problem;
  }
}
