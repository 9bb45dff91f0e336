/**
 * Headless Chromium for the page tests (the dashboard, the live view): Debian's
 * `/usr/bin/chromium` driven by playwright-core, which never downloads a browser of its own.
 *
 * @since 0.1.0
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/** Debian's Chromium, which `.ci/setup` installs. */
export const EXECUTABLE = "/usr/bin/chromium"

/**
 * The flags every launch gets. Without the background-networking ones Chromium keeps trying
 * hosts that a machine with no network but the registries refuses, many at a time.
 */
export const ARGS: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
]

/** A launched browser: its context, its first page, and `close`, which also removes its profile. */
export interface Browser {
  readonly context: BrowserContext
  readonly page: Page
  readonly close: () => Promise<void>
}

/**
 * Launches Chromium on a new empty profile. `args` are added to {@link ARGS}. Fails with a
 * message saying how to install Chromium when it is missing.
 */
export const launch = async (
  options: {
    readonly args?: ReadonlyArray<string>
    readonly viewport?: { readonly width: number; readonly height: number }
  } = {},
): Promise<Browser> => {
  if (!existsSync(EXECUTABLE)) {
    throw new Error(
      `Chromium is not installed (no ${EXECUTABLE}). The page tests need Debian's chromium: ` +
        "apt-get update && apt-get install -y chromium (.ci/setup installs it).",
    )
  }
  const profile = mkdtempSync(join(tmpdir(), "tickwork-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: EXECUTABLE,
    headless: true,
    args: [...ARGS, ...(options.args ?? [])],
    ...(options.viewport === undefined ? {} : { viewport: { ...options.viewport } }),
  })
  const page = context.pages()[0] ?? (await context.newPage())
  return {
    context,
    page,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/**
 * Waits until `expression` is true in `page`, for at most `timeoutMs`. Polled from the test with
 * `page.evaluate`: pages whose Content-Security-Policy forbids eval (the dashboard, the live
 * view) break `page.waitForFunction`, whose in-page polling evaluates the expression with eval
 * once its first check is false.
 */
export const waitUntil = async (page: Page, expression: string, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while (!(await page.evaluate(expression))) {
    if (performance.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms: ${expression}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
