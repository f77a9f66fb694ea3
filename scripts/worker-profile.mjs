/**
 * CPU profiles of the isolates of a local `wrangler dev` over the devtools
 * protocol, while `fn` runs: the Worker's own isolate (through wrangler's
 * inspector proxy, `--inspector-port`) and, found through `/proc`, the other
 * isolates of the same workerd (miniflare's entry worker, the D1 simulator,
 * the rate limiter, …: `runtimeIsolates`). Each answers its busy time (ms;
 * samples that were not idle) and the functions with the most self time.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

const SAMPLE_US = 200;

/** Opens a devtools session on `url` and starts sampling; `stop()` answers the isolate's busy ms and its top functions. */
async function startProfile(url, origin) {
  const ws = new WebSocket(url, origin ? { headers: { Origin: origin } } : undefined);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`no devtools protocol at ${url}`));
  });
  let next = 0;
  const pending = new Map();
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  // An answer that does not come within 20 s (a profile too large for the inspector's socket) counts as none.
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
      setTimeout(() => {
        pending.delete(id);
        resolve(undefined);
      }, 20_000);
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: SAMPLE_US });
  await send("Profiler.start");
  return async function stop() {
    const { profile } = (await send("Profiler.stop")) ?? {};
    ws.close();
    if (!profile) return undefined;
    const self = new Map();
    let busy = 0;
    for (const node of profile.nodes) {
      const { functionName, url: script, lineNumber } = node.callFrame;
      const hits = node.hitCount ?? 0;
      if (functionName === "(idle)") continue;
      busy += hits;
      const key = `${functionName || "(anonymous)"}${script ? ` ${script.split("/").pop()}:${lineNumber + 1}` : ""}`;
      self.set(key, (self.get(key) ?? 0) + hits);
    }
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, hits]) => ({ name, share: hits / busy }));
    return { busyMs: (busy * SAMPLE_US) / 1000, top };
  };
}

/**
 * Profiles the isolates while `fn` runs: `targets` maps a label to a devtools
 * websocket URL (and the Origin header its server wants). Answers fn's result
 * and, per label, the busy ms and top functions.
 */
export async function profileIsolates(targets, fn) {
  const stops = await Promise.all(Object.entries(targets).map(async ([label, { url, origin }]) => [label, await startProfile(url, origin)]));
  const result = await fn();
  const isolates = Object.fromEntries((await Promise.all(stops.map(async ([label, stop]) => [label, await stop()]))).filter(([, p]) => p));
  return { result, isolates };
}

/** The Worker's isolate through wrangler's inspector proxy (it only accepts a local Origin). */
export const workerTarget = (inspectorPort) => ({ url: `ws://127.0.0.1:${inspectorPort}/ws`, origin: `http://127.0.0.1:${inspectorPort}` });

/** TCP ports process `pid` listens on (Linux: its socket inodes in /proc/<pid>/fd matched with /proc/net/tcp). */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    // local_address is "IP:PORT" in hex; state 0A = LISTEN; field 9 the inode.
    if (f.length > 9 && f[3] === "0A" && inodes.has(f[9])) ports.push(parseInt(f[1].split(":")[1], 16));
  }
  return ports;
}

/**
 * The isolates of the workerd process `pid` (the one running the Worker), by
 * id (`core:entry`, `d1:db`, …), as devtools targets: its inspector listens on
 * a port chosen at start, found among the ports it listens on.
 */
export async function runtimeIsolates(pid) {
  for (const port of listeningPorts(pid)) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) });
      const list = res.ok ? await res.json().catch(() => undefined) : undefined;
      if (Array.isArray(list) && list.every((t) => t.webSocketDebuggerUrl)) return Object.fromEntries(list.map((t) => [t.id, { url: t.webSocketDebuggerUrl }]));
    } catch {
      // not the inspector
    }
  }
  return {};
}

/** The Worker's isolate alone while `fn` runs: fn's result, its busy ms and top functions. */
export async function profileWorker(inspectorPort, fn) {
  const { result, isolates } = await profileIsolates({ worker: workerTarget(inspectorPort) }, fn);
  return { result, ...isolates.worker };
}
