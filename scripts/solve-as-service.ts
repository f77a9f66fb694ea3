/**
 * The solver side of `npm run bench:routing -- --instance FILE`: solves a
 * Solomon / Gehring & Homberger instance in this process, with the service's
 * budget and seed (1), and prints one JSON line per run:
 *
 *   - `converted`: the problem the routing service builds for the request of
 *     `gh-deliveries.mjs` (the service's own `buildProblem`: great-circle
 *     matrix x 1.3 at 40 km/h, windows in seconds of the planning day),
 *     distances back in instance units;
 *   - `instance`: the instance itself (Euclidean, as `bench:solver`).
 *
 *   npx tsx scripts/solve-as-service.ts --instance FILE --seconds S [--vehicles N] [--clock cpu] [--runs converted,instance]
 *
 * Budget on the wall clock by default, as the service's; `--clock cpu` for
 * CPU time. `cpu` in the output is the CPU time the process spent solving,
 * so runs on a loaded machine can be compared with the service's.
 */
import { readFileSync } from "node:fs";
import { check, parseSolomon, type Problem, type Progress, solomonProblem, solveSync } from "../src/solver";
import { buildProblem, type RoutingParams } from "../src/core/domain/routing-plan";
import { METRES_PER_UNIT, parseInstance, routingRequest } from "./gh-deliveries.mjs";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const file = arg("instance");
if (!file) throw new Error("--instance FILE");
const seconds = Number(arg("seconds") ?? 60);
const runs = (arg("runs") ?? "converted,instance").split(",");
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const clock = arg("clock") === "cpu" ? cpuMs : Date.now;
const text = readFileSync(file, "utf8");
const instance = parseInstance(text);
const vehicles = Number(arg("vehicles") ?? Math.min(instance.fleet, 500));

/** The problem `planRun` builds for the bench's request (deliveries in the order sent; ids 1..n). */
function converted(): Problem {
  const day = new Date();
  day.setUTCHours(0, 0, 0, 0);
  day.setUTCDate(day.getUTCDate() + 1);
  const body = routingRequest(instance, day, vehicles);
  const params: RoutingParams = {
    deliveryIds: body.deliverydata.map((_, i) => i + 1),
    depot: { addressId: 0, lat: body.startaddress.lat, lng: body.startaddress.lng },
    vehicles: body.vehicles,
    numVehicles: vehicles,
    fixOrder: false,
    vehicleClass: "car",
    roundtrip: true,
    traffic: false,
    assignDrivers: false,
    useArea: false,
    driverIds: [],
    timeBudgetMs: seconds * 1000,
    timeZone: "UTC",
    requestedAt: Date.now(),
  };
  const planned = body.deliverydata.map((d, i) => ({
    id: i + 1,
    lat: d.lat,
    lng: d.lng,
    pdt_from: d.pdt_from,
    pdt_to: d.pdt_to,
    els: d.els,
    load: d.load,
    deliverprio: null,
    pickup_ref_id: null,
    postalcode: null,
    city: null,
  }));
  return buildProblem(params, planned, Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()) / 1000);
}

function run(label: string, problem: Problem, unit: number) {
  const started = clock();
  const cpu0 = cpuMs();
  let firstFeasible = NaN;
  let peak = 0;
  const onProgress = (p: Progress) => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
    if (Number.isNaN(firstFeasible) && p.unassigned === 0) firstFeasible = (clock() - started) / 1000;
  };
  const solution = solveSync(problem, { timeLimitMs: seconds * 1000, seed: 1, onProgress, clock });
  const violations = check(problem, solution).length;
  console.log(
    JSON.stringify({
      run: label,
      tours: solution.tours.length,
      unassigned: solution.unassigned.length,
      distance: solution.summary.distance / unit,
      firstFeasible,
      seconds: (clock() - started) / 1000,
      cpu: (cpuMs() - cpu0) / 1000,
      iterations: solution.stats.iterations,
      violations,
      peakMb: peak / 1048576,
    }),
  );
}

if (runs.includes("converted")) run("converted", converted(), METRES_PER_UNIT);
if (runs.includes("instance")) run("instance", solomonProblem(parseSolomon(text)), 1);
