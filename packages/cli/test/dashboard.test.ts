// `tickwork dashboard` in a real browser: worker processes run a realistic mix of tasks on a
// store (test/fixtures/fleet-worker.ts), the dashboard is started as a user starts it (the bin in
// a child process, on a free port), and its page is opened in headless Chromium (Debian's
// `chromium`, driven by playwright-core). Read-only against a SQLite file with one worker and a
// PostgreSQL fleet of two; with --allow-actions, a button pauses a task and the ledger says the
// dashboard did it, while requests without the token, from another origin or for another Host
// change and read nothing. Every wait is for a condition, under a generous deadline; the
// PostgreSQL page is kept as a screenshot (DASHBOARD_SCREENSHOT=path, a temp file otherwise).
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Chromium from "@tickwork/testkit/Chromium"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { HOSTILE } from "./fixtures/hostile-store.ts"
import { freshDatabase } from "./pg.ts"
import { tickwork } from "./support.ts"

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const bin = join(packageDir, "src/bin.ts")
// tsx as a loader in the process itself, not its CLI: the CLI runs the program in a child and
// relays signals, and under load it has killed that child outright on SIGTERM (exit 143)
// instead of letting the program's own handler shut it down.
const tsx = ["--import", import.meta.resolve("tsx")]
const WAIT = 60_000
const TOKEN = "test-token-0123456789abcdef"

let children: Array<{ readonly name: string; readonly process: ChildProcess; output: string }> = []
let browser: Chromium.Browser | undefined
let page: Page

/** Starts `args` under tsx in `cwd`; resolves with the first match of `ready` in its output. */
const start = (
  name: string,
  args: ReadonlyArray<string>,
  ready: RegExp,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {},
): Promise<RegExpExecArray> =>
  new Promise((resolveMatch, reject) => {
    const { TICKWORK_STORE: _, TICKWORK_DASHBOARD_TOKEN: __, INIT_CWD: ___, ...env } = process.env
    const p = spawn(process.execPath, [...tsx, "--conditions=@tickwork/source", ...args], {
      cwd: options.cwd ?? packageDir,
      env: { ...env, NO_COLOR: "1", ...options.env },
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
        resolveMatch(match)
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
  start(owner, [join(packageDir, "test/fixtures/fleet-worker.ts"), store, owner], /^ready$/m)

/** Starts `tickwork dashboard <args>`; its URL, and its whole output so far. */
const dashboard = async (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {},
) => {
  const match = await start(
    "dashboard",
    [bin, "dashboard", ...args],
    /tickwork dashboard: (http:\/\/127\.0\.0\.1:(\d+)\/)\n[^\n]*\n/,
    options,
  )
  return { url: match[1] as string, port: Number(match[2]), output: match.input }
}

/** Stops every child with SIGTERM (SIGKILL after 15 s); each one's exit code, by name. */
const stopAll = async (): Promise<Map<string, number | null>> => {
  const stopping = children.map(async (c): Promise<[string, number | null]> => {
    if (c.process.exitCode !== null || c.process.signalCode !== null) {
      return [c.name, c.process.exitCode]
    }
    const exited = new Promise<number | null>((r) => c.process.once("exit", (code) => r(code)))
    c.process.kill("SIGTERM")
    const timer = setTimeout(() => c.process.kill("SIGKILL"), 15_000)
    const code = await exited
    clearTimeout(timer)
    return [c.name, code]
  })
  const codes = new Map(await Promise.all(stopping))
  children = []
  return codes
}

/** One request to the dashboard on 127.0.0.1:port with exactly these headers (Host included). */
const call = (
  port: number,
  options: {
    readonly method?: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly body?: unknown
  },
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolveCall, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path,
        headers: {
          host: `127.0.0.1:${port}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...options.headers,
        },
      },
      (res) => {
        let text = ""
        res.on("data", (d) => {
          text += String(d)
        })
        res.on("end", () => resolveCall({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on("error", reject)
    req.end(body)
  })

const count = (selector: string) => page.locator(selector).count()
const text = (selector: string) => page.locator(selector).first().textContent()
const waitFor = (selector: string) =>
  page.waitForSelector(selector, { state: "attached", timeout: WAIT })
const waitUntil = (expression: string) => Chromium.waitUntil(page, expression, WAIT)

beforeAll(async () => {
  browser = await Chromium.launch({ viewport: { width: 1440, height: 1000 } })
  page = browser.page
}, WAIT)

afterEach(async () => {
  await stopAll()
}, 30_000)

afterAll(async () => {
  await browser?.close()
}, 30_000)

/** What both stores show once the fleet has worked a while, read-only. */
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
  // leased to one of them.
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
    words: [...document.querySelectorAll(".task")].map((r) => [r.dataset.task, r.querySelector(".schedule .words")?.textContent ?? null]),
  })`)) as {
    counts: Record<string, number>
    tasks: Array<string>
    owners: Array<string>
    p50: string
    max: string
    bars: Array<number>
    ledger: number
    words: Array<[string, string | null]>
  }
  // The cron task says in words what its expression means (computed by the server); the
  // others, whose schedule already reads as words, have none.
  expect(seen.words.filter(([, w]) => w !== null)).toEqual([["nightly-report", "at 02:00"]])
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
  expect(await text("#mode")).toBe("dashboard · read-only")
  // A fleet at work is healthy: the badge says so, with no reasons.
  await waitFor('#health[data-status="ok"]')
  expect(await text("#health")).toBe("health: ok")
  expect(await count("#health-reasons li")).toBe(0)
  // Read-only: nothing on the page writes, and the server refuses anything but reads, the
  // action routes included.
  expect(await count("button, form, input")).toBe(0)
  const refused = (await page.evaluate(
    `Promise.all(["/api/snapshot", "/api/pause"].map((p) => fetch(p, { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":"sync-crm"}' }).then((r) => r.status)))`,
  )) as Array<number>
  expect(refused).toEqual([405, 405])
  expect(errors).toEqual([])
}

/** Seeds the hostile store (test/fixtures/hostile-store.ts) on `file`. */
const hostileStore = (file: string) =>
  start("seeder", [join(packageDir, "test/fixtures/hostile-store.ts"), file], /^ready$/m)

/** Runs the bin once to its end (no native driver in this test's own process); its stdout. */
const cli = (...args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolveRun, reject) => {
    execFile(
      process.execPath,
      [...tsx, "--conditions=@tickwork/source", bin, ...args],
      { cwd: packageDir, timeout: WAIT },
      (error, stdout, stderr) => (error === null ? resolveRun(stdout) : reject(new Error(stderr))),
    )
  })

describe("tickwork dashboard in headless Chromium", () => {
  it("shows a SQLite store read-only; a relative --store is read against the caller's directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-dashboard-"))
    try {
      const file = join(dir, "tasks.db")
      await worker(file, "solo-worker")
      // Run from the store's directory, with a relative path, as a user types it.
      const { url } = await dashboard(["--store", "tasks.db", "--port", "0"], { cwd: dir })
      await page.goto(url)
      await waitFor('#store[data-store="sqlite"]')
      expect(await text("#store")).toBe(`sqlite · ${file}`)
      await checkFleetPage(["solo-worker"])
      // The badge shows whatever health the snapshot carries, and each reason as text: here
      // the real snapshot with an unhealthy health put in its place on the way to the page.
      const message = '<img src=x onerror="window.__pwned = 1"> work due for 75000 ms'
      await page.route("**/api/snapshot", async (route) => {
        const response = await route.fetch()
        const snap = await response.json()
        snap.stats.health = {
          status: "unhealthy",
          reasons: [
            { code: "stalled", status: "unhealthy", message },
            {
              code: "store-failing",
              status: "degraded",
              message: "the store has failed for 10 ms",
            },
          ],
        }
        await route.fulfill({ response, json: snap })
      })
      await waitFor('#health[data-status="unhealthy"]')
      expect(await text("#health")).toBe("health: unhealthy")
      expect(
        await page.evaluate(`[...document.querySelectorAll("#health-reasons li")].map((li) =>
          [li.dataset.code, li.dataset.status, li.querySelector(".message").textContent])`),
      ).toEqual([
        ["stalled", "unhealthy", message],
        ["store-failing", "degraded", "the store has failed for 10 ms"],
      ])
      expect(await page.evaluate("window.__pwned === undefined")).toBe(true)
      await page.unroute("**/api/snapshot")
      // SIGTERM is how a supervisor stops it: a clean stop, exit code 0.
      expect((await stopAll()).get("dashboard")).toBe(0)
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
      const { url } = await dashboard(["--store", db.url, "--port", "0"])
      await page.goto(url)
      await waitFor('#store[data-store="postgres"]')
      expect(await text("#store")).toMatch(/^postgres · 127\.0\.0\.1:\d+\/t_/)
      await checkFleetPage(["fleet-a", "fleet-b"])
      const shot =
        process.env.DASHBOARD_SCREENSHOT ?? join(tmpdir(), "tickwork-cli", "dashboard.png")
      mkdirSync(dirname(shot), { recursive: true })
      await page.screenshot({ path: shot, fullPage: true })
      console.log(`dashboard screenshot: ${shot}`)
      expect(existsSync(shot)).toBe(true)
    } finally {
      await stopAll()
      await db.drop()
    }
  }, 300_000)

  it("with --allow-actions, a button pauses a task with the token and the ledger says the dashboard did it; markup in the store stays text", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-dashboard-"))
    try {
      const file = join(dir, "tasks.db")
      await hostileStore(file)
      const { url, port, output } = await dashboard(
        ["--store", "tasks.db", "--port", "0", "--allow-actions"],
        { cwd: dir, env: { TICKWORK_DASHBOARD_TOKEN: TOKEN } },
      )
      expect(output).toContain(`store: sqlite ${file} (writable`)
      expect(output).toContain("token: from TICKWORK_DASHBOARD_TOKEN")
      expect(output).not.toContain(TOKEN)
      const state = async (id: string) =>
        JSON.parse(await cli("status", id, "--store", file, "--json")).state

      // Without the token, with a wrong one, from another origin, for another Host: refused,
      // and nothing changed.
      const origin = `http://127.0.0.1:${port}`
      const post = (headers: Record<string, string>) =>
        call(port, { method: "POST", path: "/api/pause", headers, body: { id: "sync-crm" } })
      expect((await post({ origin })).status).toBe(401)
      expect((await post({ origin, "x-tickwork-token": "not-the-token-at-all" })).status).toBe(403)
      expect(
        (await post({ origin: "http://evil.example", "x-tickwork-token": TOKEN })).status,
      ).toBe(403)
      expect((await post({ "x-tickwork-token": TOKEN })).status).toBe(403)
      const rebound = await call(port, {
        path: "/api/snapshot",
        headers: { host: `evil.example:${port}` },
      })
      expect(rebound.status).toBe(421)
      expect(rebound.body).not.toContain("sync-crm")
      expect(
        (await call(port, { path: "/", headers: { host: `evil.example:${port}` } })).status,
      ).toBe(421)
      expect(await state("sync-crm")).toBe("scheduled")
      // SPEC §19.1: the trigger route needs the token like every action.
      const trigger = (headers: Record<string, string>) =>
        call(port, { method: "POST", path: "/api/trigger", headers, body: { id: "sync-crm" } })
      expect((await trigger({ origin })).status).toBe(401)
      expect(await cli("ledger", "sync-crm", "--store", file)).not.toContain("manual-trigger")

      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      await page.goto(`${url}#token=${TOKEN}`)
      await waitFor('.task[data-task="sync-crm"] button[data-action="pause"]')
      expect(await text("#mode")).toBe("dashboard · actions enabled")
      // The token left the address bar; it is kept for this tab only.
      expect(page.url()).toBe(url)

      // Every hostile field is on the page as the very text stored, and none of it ran.
      await waitFor('.task[data-state="failed"]')
      const shown = (await page.evaluate(`(() => {
        const row = [...document.querySelectorAll(".task")].find((r) => r.dataset.state === "failed")
        return {
          id: row.querySelector(".id").textContent,
          handler: row.querySelector(".handler").textContent,
          tags: row.querySelector(".tags").textContent,
          payload: row.querySelector(".payload").textContent,
          error: row.querySelector(".err").textContent,
          scripts: document.querySelectorAll("script").length,
          injected: document.querySelectorAll("#tasks img, #tasks svg, #tasks b, #tasks script, #ledger img, #ledger svg, #ledger b, #ledger script").length,
          pwned: window.__pwned === undefined ? null : String(window.__pwned),
        }
      })()`)) as Record<string, string | number | null>
      expect(shown).toEqual({
        id: HOSTILE.id,
        handler: HOSTILE.handler,
        tags: HOSTILE.tag,
        payload: JSON.stringify({ html: HOSTILE.payload }),
        error: JSON.stringify(HOSTILE.error),
        scripts: 1,
        injected: 0,
        pwned: null,
      })
      // A kept result (SPEC §19.3) is text too: the stored JSON, as stored.
      await waitFor('#ledger li[data-kind="ran"][data-task="report"] .result')
      expect(await text('#ledger li[data-kind="ran"][data-task="report"] .result')).toBe(
        `result ${JSON.stringify(HOSTILE.result)}`,
      )
      expect(
        await page.evaluate(`document.querySelectorAll("#ledger img, #ledger .result *").length`),
      ).toBe(0)

      // SPEC §19.1: a scheduled task offers trigger; the seeder's worker claims the manual run,
      // and the ledger says the dashboard asked for it.
      await page.click('.task[data-task="sync-crm"] button[data-action="trigger"]')
      await waitFor(
        '#ledger li[data-kind="manual-trigger"][data-task="sync-crm"][data-origin="dashboard"]',
      )
      expect(await cli("ledger", "sync-crm", "--store", file)).toContain(
        "manual-trigger by dashboard",
      )

      await page.click('.task[data-task="sync-crm"] button[data-action="pause"]')
      await waitFor('.task[data-task="sync-crm"][data-state="paused"]')
      await waitFor('#ledger li[data-kind="paused"][data-task="sync-crm"][data-origin="dashboard"]')
      expect(await text('#ledger li[data-kind="paused"][data-task="sync-crm"] .what')).toBe(
        "paused by dashboard",
      )
      expect(await state("sync-crm")).toBe("paused")
      const ledger = await cli("ledger", "sync-crm", "--store", file)
      expect(ledger).toMatch(/ paused by dashboard +\S+ +- +- +- +manual$/m)

      // SPEC §19.2: the failed task offers retry (and nothing else); the seeder's worker claims
      // the new attempt, which fails again, and the ledger says the dashboard asked for it.
      expect(
        await page.evaluate(
          `[...document.querySelectorAll('.task[data-state="failed"] button')].map((b) => b.dataset.action)`,
        ),
      ).toEqual(["retry"])
      expect(
        await page.evaluate(
          `[...document.querySelectorAll('.task[data-task="sync-crm"] button')].map((b) => b.dataset.action)`,
        ),
      ).not.toContain("retry")
      await page.evaluate(
        `document.querySelector('.task[data-state="failed"] button[data-action="retry"]').click()`,
      )
      await waitFor('#ledger li[data-kind="manual-retry"][data-origin="dashboard"]')
      expect(await text('#ledger li[data-kind="manual-retry"] .what')).toBe(
        "manual-retry by dashboard",
      )
      expect(await cli("ledger", HOSTILE.id, "--store", file)).toContain(
        "manual-retry by dashboard",
      )

      // SPEC §19.7: the failed run of flaky's first slot offers a retry of that slot (the only
      // failed run of a scheduled recurring task); the seeder's worker runs it, it succeeds,
      // and the slot is offered no more. Asked again, the page shows core's refusal.
      const slotButton =
        '#ledger li[data-kind="ran"][data-task="flaky"] button[data-action="retry"]'
      await waitFor(slotButton)
      expect(await count('#ledger button[data-action="retry"]')).toBe(1)
      const slot = Number(await page.getAttribute(slotButton, "data-slot"))
      await page.click(slotButton)
      await waitFor(
        '#ledger li[data-kind="manual-retry"][data-task="flaky"][data-origin="dashboard"]',
      )
      await waitFor('#ledger li[data-kind="ran"][data-task="flaky"][data-outcome="succeeded"]')
      await waitUntil(
        `document.querySelectorAll('#ledger button[data-action="retry"]').length === 0`,
      )
      await page.evaluate(`act("retry", "flaky", ${slot})`)
      await waitFor('#notice[data-result="refused"]')
      expect(await text("#notice")).toBe(
        `retry slot ${new Date(slot).toISOString().replace("T", " ").slice(0, 19)}Z: cannot retry slot ${slot} of "flaky": its last run of slot ${slot} (attempt 2) succeeded: only a failed slot can be retried`,
      )

      // Now paused, the page offers resume; a wrong token from the page itself is refused and
      // changes nothing.
      await waitFor('.task[data-task="sync-crm"] button[data-action="resume"]')
      await page.fill("#token", "not-the-token-at-all")
      await page.dispatchEvent("#token", "change")
      await page.click('.task[data-task="sync-crm"] button[data-action="cancel"]')
      // The notice already says "refused" (the slot above): wait for this refusal's own words.
      await waitUntil(`document.querySelector("#notice").textContent.includes("wrong token")`)
      expect(await text("#notice")).toContain("wrong token")
      expect(await state("sync-crm")).toBe("paused")
      expect(await page.evaluate("window.__pwned === undefined")).toBe(true)
      expect(errors).toEqual([])
    } finally {
      await stopAll()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it("bound beyond loopback, reads need the token too; the page holds no data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-dashboard-"))
    try {
      const file = join(dir, "tasks.db")
      await hostileStore(file)
      const { port, output } = await dashboard([
        "--store",
        file,
        "--port",
        "0",
        "--host",
        "0.0.0.0",
      ])
      const token = /token: (\S+) \(open /.exec(output)?.[1] as string
      expect(token.length).toBeGreaterThanOrEqual(16)
      expect(output).toContain("(read-only)")
      expect((await call(port, { path: "/api/snapshot" })).status).toBe(401)
      const wrong = await call(port, {
        path: "/api/snapshot",
        headers: { "x-tickwork-token": "x" },
      })
      expect(wrong.status).toBe(403)
      const read = await call(port, {
        path: "/api/snapshot",
        headers: { "x-tickwork-token": token },
      })
      expect(read.status).toBe(200)
      expect(JSON.parse(read.body)).toMatchObject({ readOnly: true, actions: false })
      const home = await call(port, { path: "/" })
      expect(home.status).toBe(200)
      expect(home.body).not.toContain("sync-crm")
      // Still read-only: a POST with the token is refused.
      const post = await call(port, {
        method: "POST",
        path: "/api/pause",
        headers: { "x-tickwork-token": token, origin: `http://127.0.0.1:${port}` },
        body: { id: "sync-crm" },
      })
      expect(post.status).toBe(405)
      expect(
        (await call(port, { path: "/api/snapshot", headers: { host: "evil.example" } })).status,
      ).toBe(421)
    } finally {
      await stopAll()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})

describe("tickwork dashboard: bad input", () => {
  it("a bad --port, a short token or a store that cannot be used is the typed error naming it", async () => {
    const port = await Effect.runPromise(tickwork("dashboard", "--store", "x.db", "--port", "http"))
    expect(port.code).toBe(1)
    expect(port.stderr).toContain('port must be a whole number from 0 to 65535, got "http"')
    const big = await Effect.runPromise(tickwork("dashboard", "--store", "x.db", "--port", "65536"))
    expect(big.stderr).toContain('got "65536"')
    const failed = start(
      "dashboard",
      [bin, "dashboard", "--store", "mysql://db/x", "--port", "0"],
      /tickwork dashboard: (\S+)/,
    )
    await expect(failed).rejects.toThrow(
      /exited \(1\)[\s\S]*store must be a SQLite file path or a postgres:\/\/ URL, got "mysql:\/\/db\/x"/,
    )
    const short = start(
      "dashboard",
      [bin, "dashboard", "--store", "x.db", "--port", "0", "--allow-actions"],
      /tickwork dashboard: (\S+)/,
      { env: { TICKWORK_DASHBOARD_TOKEN: "short" } },
    )
    await expect(short).rejects.toThrow(
      /exited \(1\)[\s\S]*TICKWORK_DASHBOARD_TOKEN must be at least 16 printable ASCII characters/,
    )
  }, 120_000)
})
