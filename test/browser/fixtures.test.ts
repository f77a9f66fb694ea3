/**
 * The browser fixture leaves nothing behind when a start fails: a browser that
 * cannot be launched must not leave the `wrangler dev` started beside it (nor
 * its workerd, nor its state folder) running once the error is reported.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { findChromium } from "./chromium";
import { startServiceAndBrowser } from "./fixtures";

/** Every process but this one: id, process group and command line. */
function processes(): { pid: number; pgid: number; args: string }[] {
  return execFileSync("ps", ["-eo", "pid=,pgid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .flatMap((m) => (m ? [{ pid: Number(m[1]), pgid: Number(m[2]), args: m[3] }] : []))
    .filter((p) => p.pid !== process.pid);
}

describe("starting a browser test file", () => {
  it("stops the service it started and removes its state when the browser cannot be launched", async () => {
    const prefix = "dispatch-browser-nobrowser-";
    // Remember the process groups the start creates while it runs (wrangler dev names its state folder).
    const groups = new Set<number>();
    const watch = setInterval(() => processes().forEach((p) => p.args.includes(prefix) && groups.add(p.pgid)), 200);
    const start = startServiceAndBrowser("nobrowser", { executablePath: "/nonexistent/chromium", env: {}, source: "a path that does not exist" });
    await expect(start).rejects.toThrow(/nonexistent\/chromium/);
    clearInterval(watch);

    expect(groups.size).toBeGreaterThan(0);
    expect(processes().filter((p) => groups.has(p.pgid) || p.args.includes(prefix))).toEqual([]);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(prefix))).toEqual([]);
  });
});

describe("finding the browser", () => {
  it("refuses a CHROMIUM_PATH that does not exist instead of taking another browser", () => {
    expect(() => findChromium({ env: { CHROMIUM_PATH: "/nonexistent/chrome" } })).toThrow(/CHROMIUM_PATH=\/nonexistent\/chrome does not exist.*CHROMIUM_PATH to a Chromium/);
  });

  it("says how to get a browser where none is installed and npm ships none", () => {
    // No Chrome in /Applications on this (Linux) machine, and the npm package is for Linux x64 only.
    expect(() => findChromium({ env: {}, platform: "darwin", arch: "arm64" })).toThrow(/No Chromium found.*install Google Chrome \(macOS: into \/Applications\)/);
  });
});
