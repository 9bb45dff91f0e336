// The dashboard over a durable store in a real browser: worker processes run a realistic mix of
// tasks on a store (test/fixtures/fleet-worker.ts), the dashboard is started as
// `pnpm dashboard --store …` would start it (a child process on a free port, read-only), and its
// page is opened in headless Chromium (Debian's `chromium`, driven by playwright-core). Against
// a SQLite file with one worker, and against a PostgreSQL fleet of two workers. Every wait is for
// a condition on the page, under a generous deadline; the PostgreSQL page is kept as a
// screenshot (DASHBOARD_SCREENSHOT=path to choose where, a temp file otherwise).
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "./pg.ts"

const CHROMIUM = "/usr/bin/chromium"
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
]
const exampleDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const tsx = createRequire(import.meta.url).resolve("tsx/cli")
const WAIT = 60_000

let children: Array<{ readonly name: string; readonly process: ChildProcess; output: string }> = []
let context: BrowserContext | undefined
let profile: string | undefined
let page: Page

/** Starts `args` under tsx; resolves with the first match of `ready` in its output. */
const start = (name: string, args: ReadonlyArray<string>, ready: RegExp): Promise<string> =>
  new Promise((resolveMatch, reject) => {
    const p = spawn(process.execPath, [tsx, "--conditions=@tickwork/source", ...args], {
      cwd: exampleDir,
      stdio: ["ignore", "pipe", "pipe"],
    })
    const child = { name, process: p, output: "" }
    children.push(child)
    const timer = setTimeout(
      () => reject(new Error(`${name} was not ready within ${WAIT} ms:\n${child.output}`)),
      WAIT,
    )
    const onData = (data: Buffer) => {
      child.output += String(data)
      const match = ready.exec(child.output)
      if (match !== null) {
        clearTimeout(timer)
        resolveMatch(match[1] ?? match[0])
      }
    }
    p.stdout?.on("data", onData)
    p.stderr?.on("data", onData)
    p.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before it was ready:\n${child.output}`))
    })
  })

const worker = (store: string, owner: string) =>
  start(owner, ["test/fixtures/fleet-worker.ts", store, owner], /^ready$/m)
const dashboard = (store: string) =>
  start(
    "dashboard",
    ["src/dashboard-main.ts", "--store", store, "--port", "0"],
    /tickwork dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/,
  )

const stopAll = async () => {
  const stopping = children.map(async (c) => {
    if (c.process.exitCode !== null || c.process.signalCode !== null) return
    const exited = new Promise<void>((r) => c.process.once("exit", () => r()))
    c.process.kill("SIGTERM")
    const timer = setTimeout(() => c.process.kill("SIGKILL"), 15_000)
    await exited
    clearTimeout(timer)
  })
  await Promise.all(stopping)
  children = []
}

const count = (selector: string) => page.locator(selector).count()
const text = (selector: string) => page.locator(selector).first().textContent()
const waitFor = (selector: string) =>
  page.waitForSelector(selector, { state: "attached", timeout: WAIT })
const waitUntil = (expression: string) =>
  page.waitForFunction(expression, undefined, { timeout: WAIT })

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed (no ${CHROMIUM}). This test needs Debian's chromium: ` +
        "apt-get update && apt-get install -y chromium (.ci/run installs it).",
    )
  }
  profile = mkdtempSync(join(tmpdir(), "tickwork-chromium-"))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 1000 },
  })
  page = context.pages()[0] ?? (await context.newPage())
}, WAIT)

afterEach(stopAll, 30_000)

afterAll(async () => {
  await context?.close()
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true })
}, 30_000)

/** What both stores show once the fleet has worked a while. */
const checkFleetPage = async (owners: ReadonlyArray<string>) => {
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  // The stable states: one paused by hand, one cancelled, one one-shot done, one failed.
  for (const selector of [
    '.state-card[data-state="paused"] .count',
    '.task[data-task="cleanup"][data-state="paused"][data-reason="manual"]',
    '.task[data-task="old-export"][data-state="cancelled"]',
    '.task[data-task="welcome-ada"][data-state="done"]',
    '.task[data-task="import-legacy"][data-state="failed"]',
    '.task[data-task="nightly-report"][data-state="scheduled"]',
    '#ledger li[data-kind="ran"][data-outcome="succeeded"]',
    '#ledger li[data-kind="ran"][data-outcome="failed"]',
  ]) {
    await waitFor(selector)
  }
  // Every worker of the fleet is listed with runs completed; the slow task is seen running,
  // leased to one of them, with its lease expiry.
  for (const owner of owners) {
    await waitUntil(
      `Number(document.querySelector('.owner[data-owner="${owner}"]')?.dataset.completed ?? 0) > 0`,
    )
  }
  await waitUntil(
    `[...document.querySelectorAll('.task[data-task="feed-poll"][data-state="running"]')].some((r) => ${JSON.stringify(owners)}.includes(r.dataset.owner))`,
  )
  await waitUntil(`Number(document.querySelector('[data-stat="runs"]')?.dataset.value) > 10`)

  // Read in one go: the page re-renders every second.
  const seen = (await page.evaluate(`({
    counts: Object.fromEntries([...document.querySelectorAll(".state-card")].map((c) => [c.dataset.state, Number(c.querySelector(".count").textContent)])),
    tasks: [...document.querySelectorAll(".task")].map((r) => r.dataset.task).sort(),
    owners: [...document.querySelectorAll(".owner")].map((r) => r.dataset.owner),
    p50: document.querySelector('[data-stat="p50"]').dataset.value,
    max: document.querySelector('[data-stat="max"]').dataset.value,
    bars: [...document.querySelectorAll("#hist rect.bar")].map((b) => Number(b.dataset.count)),
    ledger: document.querySelectorAll("#ledger li").length,
  })`)) as {
    counts: Record<string, number>
    tasks: Array<string>
    owners: Array<string>
    p50: string
    max: string
    bars: Array<number>
    ledger: number
  }
  expect(seen.tasks).toEqual([
    "cleanup",
    "feed-poll",
    "import-legacy",
    "mail-digest",
    "nightly-report",
    "old-export",
    "sync-billing",
    "sync-crm",
    "welcome-ada",
  ])
  expect(Object.values(seen.counts).reduce((a, b) => a + b, 0)).toBe(9)
  expect([seen.counts.paused, seen.counts.done, seen.counts.failed, seen.counts.cancelled]).toEqual(
    [1, 1, 1, 1],
  )
  expect(seen.owners.filter((o) => owners.includes(o)).sort()).toEqual([...owners].sort())
  expect(Number(seen.p50)).toBeGreaterThanOrEqual(0)
  expect(Number(seen.max)).toBeGreaterThanOrEqual(Number(seen.p50))
  expect(seen.bars).toHaveLength(10)
  expect(seen.bars.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
  expect(seen.ledger).toBeGreaterThan(10)
  expect(await text("#conn-text")).toBe("live")
  expect(await text(".brand em")).toBe("dashboard · read-only")
  // Read-only: nothing on the page writes, and the server refuses anything but reads.
  expect(await count("button, form, input")).toBe(0)
  const refused = (await page.evaluate(
    `fetch("/api/snapshot", { method: "POST" }).then((r) => r.status)`,
  )) as number
  expect(refused).toBe(405)
  expect(errors).toEqual([])
}

describe("the dashboard over a durable store, in headless Chromium", () => {
  it("shows a SQLite store's tasks by state, its worker, the recent ledger and lateness", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-dashboard-"))
    try {
      const file = join(dir, "tasks.db")
      await worker(file, "solo-worker")
      const url = await dashboard(file)
      await page.goto(url)
      await waitFor('#store[data-store="sqlite"]')
      expect(await text("#store")).toBe(`sqlite · ${file}`)
      await checkFleetPage(["solo-worker"])
    } finally {
      await stopAll()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it("shows a PostgreSQL fleet of two workers: both lease owners and their runs", async () => {
    const db = await freshDatabase()
    try {
      await worker(db.url, "fleet-a")
      await worker(db.url, "fleet-b")
      const url = await dashboard(db.url)
      await page.goto(url)
      await waitFor('#store[data-store="postgres"]')
      expect(await text("#store")).toMatch(/^postgres · 127\.0\.0\.1:\d+\/t_/)
      await checkFleetPage(["fleet-a", "fleet-b"])
      const shot =
        process.env.DASHBOARD_SCREENSHOT ?? join(tmpdir(), "tickwork-inspector", "dashboard.png")
      mkdirSync(dirname(shot), { recursive: true })
      await page.screenshot({ path: shot, fullPage: true })
      console.log(`dashboard screenshot: ${shot}`)
      expect(existsSync(shot)).toBe(true)
    } finally {
      await stopAll()
      await db.drop()
    }
  }, 300_000)

  it("a store that cannot be used stops the dashboard with the typed error's message", async () => {
    const failed = start(
      "dashboard",
      ["src/dashboard-main.ts", "--store", "mysql://db/x", "--port", "0"],
      /tickwork dashboard: (\S+)/,
    )
    await expect(failed).rejects.toThrow(
      /exited \(1\)[\s\S]*store must be a SQLite file path or a postgres:\/\/ URL, got "mysql:\/\/db\/x"/,
    )
  }, 120_000)
})
