/** Finds the browser once for all browser test files (unpacking the npm-shipped one at most once); `inject("chromium")` hands it to them. */
import type { TestProject } from "vitest/node";
import { type BrowserChoice, findChromium } from "./chromium";

declare module "vitest" {
  export interface ProvidedContext {
    chromium: BrowserChoice;
  }
}

export default function setup(project: TestProject) {
  const chromium = findChromium();
  console.log(`browser tests: Chromium ${chromium.source} (${chromium.executablePath})`);
  project.provide("chromium", chromium);
}
