/**
 * CPU time of the processes a local benchmark runs on (Linux `/proc`): the
 * processes of `wrangler dev`'s process group, each labelled by its role, and
 * this process (the load generator). `sample()` answers CPU milliseconds per
 * label so far; the difference of two samples is what each spent meanwhile.
 */
import { readFileSync, readdirSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux x86-64 and arm64). */
const TICK_MS = 10;

/**
 * What each process of `wrangler dev` is, from its command line: the workerd
 * listening on the public port runs wrangler's proxy worker; the other workerd
 * runs the Worker and its simulated bindings (D1, Durable Objects, queues).
 */
function roleOf(cmdline, port) {
  if (cmdline.includes("workerd")) return cmdline.includes(`entry=127.0.0.1:${port}`) ? "proxy" : "runtime";
  if (cmdline.includes("wrangler-dist") || cmdline.includes("wrangler.js")) return "wrangler";
  return "other";
}

export const ROLES = {
  proxy: "workerd of wrangler's local proxy (the public port)",
  runtime: "workerd running the Worker and the D1 simulator",
  wrangler: "wrangler's node process",
  other: "npm, esbuild",
  loadgen: "the load generator (autocannon, this process)",
};

/** The processes of group `pgid` (listening on `port`) with their role and CPU ms so far. */
function processesOf(pgid, port) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    let cmdline;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // After the command name in parentheses: state ppid pgrp ... utime (12th) stime (13th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    found.push({ pid: Number(entry), role: roleOf(cmdline, port), ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
  }
  return found;
}

/** The pid of the workerd that runs the Worker (undefined until it runs, or off Linux). */
export const runtimePid = (pgid, port) => (process.platform === "linux" ? processesOf(pgid, port).find((p) => p.role === "runtime")?.pid : undefined);

/** CPU ms per role of the processes in process group `pgid` (listening on `port`) and of this process. */
export function processCpu(pgid, port) {
  if (process.platform !== "linux") return () => ({});
  return function sample() {
    const ms = { proxy: 0, runtime: 0, wrangler: 0, other: 0 };
    for (const p of processesOf(pgid, port)) ms[p.role] += p.ms;
    const own = process.cpuUsage();
    ms.loadgen = (own.user + own.system) / 1000;
    return ms;
  };
}
