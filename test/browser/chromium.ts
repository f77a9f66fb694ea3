/**
 * Which Chromium the browser tests drive, so that `npm install && npm test`
 * needs nothing but Node: `CHROMIUM_PATH` when set, else a Chromium or Chrome
 * installed on the machine, else (Linux x64) the one `npm install` brought in
 * the `@sparticuz/chromium` package, unpacked once into node_modules/.cache.
 * Without any of them the browser project fails with this file's message.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/** What `chromium.launch` needs: the executable and what to add to its environment. */
export interface BrowserChoice {
  executablePath: string;
  env: Record<string, string>;
  /** Where it came from, for the test log. */
  source: string;
}

const SYSTEM_BROWSERS: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"],
  darwin: ["/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"],
};

const HOW_TO_GET_ONE =
  "The browser tests need Chromium or Google Chrome. On Linux x64 `npm install` brings one (the @sparticuz/chromium package: run `npm install` again if it is missing); " +
  "elsewhere install Google Chrome (macOS: into /Applications) or Chromium (Debian: `apt-get install chromium`), or set CHROMIUM_PATH to a Chromium or Chrome executable.";

export function findChromium(o: { env?: NodeJS.ProcessEnv; platform?: NodeJS.Platform; arch?: string } = {}): BrowserChoice {
  const { env = process.env, platform = process.platform, arch = process.arch } = o;
  if (env.CHROMIUM_PATH) {
    // A browser asked for by name is never swapped for another one silently.
    if (!existsSync(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist. ${HOW_TO_GET_ONE}`);
    return { executablePath: env.CHROMIUM_PATH, env: {}, source: "CHROMIUM_PATH" };
  }
  const installed = (SYSTEM_BROWSERS[platform] ?? []).find((path) => existsSync(path));
  if (installed) return { executablePath: installed, env: {}, source: "installed on this machine" };
  if (platform === "linux" && arch === "x64") return unpackedFromNpm();
  throw new Error(`No Chromium found (${platform}-${arch}: none of ${(SYSTEM_BROWSERS[platform] ?? []).join(", ") || "no known places"}). ${HOW_TO_GET_ONE}`);
}

/**
 * @sparticuz/chromium ships a brotli-compressed headless Chromium with the few
 * libraries it links beyond glibc (NSS, NSPR, expat: its `al2023` set) and a font.
 * Its own `executablePath()` unpacks into the temp folder; here the package runs
 * in a child with TMPDIR pointing at a staging folder that is renamed into place
 * only when complete, so an interrupted unpack is never mistaken for a browser.
 */
function unpackedFromNpm(): BrowserChoice {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve("@sparticuz/chromium");
  } catch {
    throw new Error(`No Chromium found: neither installed on this machine nor in node_modules/@sparticuz/chromium. ${HOW_TO_GET_ONE}`);
  }
  const pkg = dirname(dirname(entry));
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  const dir = join(pkg, "..", "..", ".cache", `sparticuz-chromium-${version}`);
  if (!existsSync(join(dir, "chromium"))) {
    const staging = `${dir}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    try {
      const script = `const m = await import(${JSON.stringify(pathToFileURL(entry).href)});
await m.default.executablePath();
await m.inflate(${JSON.stringify(join(pkg, "bin", "al2023.tar.br"))});`;
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: staging }, stdio: "pipe" });
      writeFileSync(
        join(staging, "fonts.conf"),
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, "fonts", "fonts")}</dir>\n  <dir>/usr/share/fonts</dir>\n  <dir>/usr/local/share/fonts</dir>\n  <cachedir>${join(dir, "fonts-cache")}</cachedir>\n</fontconfig>\n`,
      );
      if (!existsSync(join(dir, "chromium"))) {
        rmSync(dir, { recursive: true, force: true });
        renameSync(staging, dir);
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return {
    executablePath: join(dir, "chromium"),
    // Its own libraries and fonts, so it runs on a machine without any browser package installed.
    env: { LD_LIBRARY_PATH: join(dir, "al2023", "lib"), FONTCONFIG_FILE: join(dir, "fonts.conf") },
    source: `@sparticuz/chromium ${version}`,
  };
}
