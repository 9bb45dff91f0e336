// The live view in a real browser: start the example as `pnpm start` would (a child process on a
// free port), open its page in headless Chromium (Debian's `chromium`, driven by playwright-core),
// wait until the demo's tasks reach known states (a task paused by hand, one paused by its
// failure policy, two held by an open circuit breaker), check what the page shows, and save a
// screenshot (INSPECTOR_SCREENSHOT=path to choose where, a temp file otherwise;
// INSPECTOR_SCREENSHOT_AFTER=ms to wait before taking it).
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Chromium from "@tickwork/testkit/Chromium"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const exampleDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")

let child: ChildProcess | undefined
let output = ""
let browser: Chromium.Browser | undefined
const timings: Record<string, number> = {}

/** Starts `src/main.ts` with tsx on a free port; resolves with the URL it prints. */
const startExample = (): Promise<string> =>
  new Promise((resolveUrl, reject) => {
    // tsx as a loader in the process itself, not its CLI: the CLI runs the program in a child and
    // relays signals, and under load it has killed that child outright on SIGTERM (exit 143)
    // instead of letting the program's own handler shut it down.
    const tsx = ["--import", import.meta.resolve("tsx")]
    child = spawn(
      process.execPath,
      [...tsx, "--conditions=@tickwork/source", "src/main.ts", "--port", "0", "--duration", "120"],
      { cwd: exampleDir, stdio: ["ignore", "pipe", "pipe"] },
    )
    const timer = setTimeout(
      () => reject(new Error(`the example printed no URL within 30 s:\n${output}`)),
      30_000,
    )
    const onData = (data: Buffer) => {
      output += String(data)
      const url = /tickwork live view: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolveUrl(url)
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the example exited (${code}) before printing its URL:\n${output}`))
    })
  })

const stopExample = async (): Promise<number | null> => {
  const proc = child
  if (proc === undefined || proc.exitCode !== null) return proc?.exitCode ?? null
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)))
  proc.kill("SIGTERM")
  const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 15_000))
  const result = await Promise.race([exited, timeout])
  if (result === "timeout") {
    proc.kill("SIGKILL")
    throw new Error("the example did not stop within 15 s of SIGTERM")
  }
  return result
}

const waitUntil = (page: Page, expression: string) => Chromium.waitUntil(page, expression, 30_000)

const count = (page: Page, selector: string) => page.locator(selector).count()

describe("the live view in headless Chromium", () => {
  let page: Page
  let url: string

  beforeAll(async () => {
    let t = Date.now()
    url = await startExample()
    timings.exampleStartMs = Date.now() - t
    t = Date.now()
    browser = await Chromium.launch({ viewport: { width: 1440, height: 1000 } })
    page = browser.page
    timings.browserLaunchMs = Date.now() - t
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    const code = await stopExample()
    expect(code, `the example should stop cleanly on SIGTERM:\n${output}`).toBe(0)
    console.log(`live view test timings (ms): ${JSON.stringify(timings)}`)
  }, 30_000)

  it("shows every task's state on the diagram, its runs on a timeline, paused tasks, circuit breakers, control occurrences and a lateness histogram", async () => {
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.message))
    let t = Date.now()
    await page.goto(url)
    await page.waitForSelector("#overview svg .node", { timeout: 30_000 })
    timings.firstPaintMs = Date.now() - t
    t = Date.now()

    // The demo's known states, a few seconds in. Each is waited for on the page's DOM with a
    // generous deadline: on a busy machine the demo and the page both run late.
    const settled = [
      '.task[data-task="nightly-import"][data-state="paused"][data-reason="failures"]',
      '.task[data-task="report"][data-state="cancelled"]',
      '.task[data-task="warmup"][data-state="done"]',
      '.task[data-task="report"] .cancel-mark',
      '.task[data-task="metrics-rollup"] .missed[data-kind="skipped"]',
      '.task[data-task="slow-poller"] .missed[data-kind="coalesced"]',
      '.task[data-task="flaky-sync"] .run[data-kind="retried"]',
      '.task[data-task="timeout-prone"] .run[data-outcome="timed-out"]',
      // Two tasks share the "smtp" breaker; the mail server is down, so it opens and holds both.
      '.breaker[data-breaker="smtp"][data-state="open"]',
      '.task[data-task="mail-digest"][data-state="paused"][data-reason="breaker"]',
      '.task[data-task="invoice-mail"][data-state="paused"][data-reason="breaker"]',
      '.task[data-task="mail-digest"] .missed[data-kind="skipped"][data-cause="breaker"]',
      // The control occurrences list shows pauses, resumes and breaker transitions.
      '#occ-list li[data-kind="paused"]',
      '#occ-list li[data-kind="resumed"]',
      '#occ-list li[data-kind="breaker"][data-breaker="smtp"][data-to="open"]',
      '#occ-list li[data-kind="breaker"][data-breaker="smtp"][data-to="half-open"]',
    ]
    for (const selector of settled) {
      await page.waitForSelector(selector, { state: "attached", timeout: 30_000 })
    }
    // "backup" is paused by hand at 2 s, resumed at 5 s and paused again at 7 s for good: its
    // timeline shows both pauses, and its slots skipped while paused.
    await waitUntil(
      page,
      `document.querySelectorAll('.task[data-task="backup"] .paused-band[data-reason="manual"]').length >= 2`,
    )
    await page.waitForSelector(
      '.task[data-task="backup"] .missed[data-kind="skipped"][data-cause="paused"]',
      { state: "attached", timeout: 30_000 },
    )
    await waitUntil(
      page,
      `document.querySelectorAll('.task[data-task="heartbeat"] .run[data-outcome="succeeded"]').length >= 3`,
    )
    timings.statesReachedMs = Date.now() - t

    // The machine's diagram, drawn from its definition: 6 states, 14 arrows (one per pair; the
    // manual runs' TRIGGER and RETRY add scheduled>scheduled and failed>scheduled, SPEC §19.5;
    // the machine's store-only HAND_BACK shares running>scheduled, SPEC §5.5).
    expect(
      await page
        .locator("#overview .node")
        .evaluateAll((ns) => ns.map((n) => n.getAttribute("data-state"))),
    ).toEqual(["scheduled", "running", "paused", "done", "failed", "cancelled"])
    expect(await count(page, "#overview .edge")).toBe(14)
    expect(
      (await page.locator('#overview .edge[data-edge="running>scheduled"] text').textContent())
        ?.split(" · ")
        .sort(),
    ).toEqual(["FAIL", "HAND_BACK", "MANUAL_END", "SUCCEED"])
    expect(
      await page.locator('#overview .edge[data-edge="scheduled>scheduled"] text').textContent(),
    ).toBe("TRIGGER")
    expect(
      await page.locator('#overview .edge[data-edge="failed>scheduled"] text').textContent(),
    ).toBe("RETRY")
    expect(
      await page.locator('#overview .edge[data-edge="scheduled>paused"] text').textContent(),
    ).toBe("PAUSE")
    expect(
      await page.locator('#overview .edge[data-edge="paused>scheduled"] text').textContent(),
    ).toBe("RESUME")

    // Each task sits in its state on the overview, and its own diagram highlights that state.
    for (const [task, state] of [
      ["nightly-import", "paused"],
      ["backup", "paused"],
      ["report", "cancelled"],
      ["warmup", "done"],
    ] as const) {
      expect(
        await count(page, `#overview .node[data-state="${state}"] .chip[data-task="${task}"]`),
      ).toBe(1)
      const current = page.locator(`.task[data-task="${task}"] .mini .node.current`)
      expect(await current.count()).toBe(1)
      expect(await current.getAttribute("data-state")).toBe(state)
      expect(await page.locator(`.task[data-task="${task}"] .state`).textContent()).toBe(state)
    }
    // Every task is somewhere on the overview, exactly once.
    const rows = await page
      .locator(".task")
      .evaluateAll((ns) => ns.map((n) => n.getAttribute("data-task")))
    expect(rows).toHaveLength(18)
    expect(await count(page, "#overview .chip[data-task]")).toBe(18)
    // A cron task says in words what its expression means, derived by the view from the
    // schedule it was given (core's explain), and it runs; no other task has words.
    await page.waitForSelector('.task[data-task="cron-tick"] .run[data-outcome="succeeded"]', {
      state: "attached",
      timeout: 30_000,
    })
    const words = await page
      .locator(".task")
      .evaluateAll((ns) =>
        ns
          .map((n) => [n.getAttribute("data-task"), n.querySelector(".words")?.textContent ?? ""])
          .filter(([, w]) => w !== ""),
      )
    expect(words).toEqual([["cron-tick", "every 3 seconds"]])
    // The context shown is the machine's: nightly-import was paused after 2 failed slots.
    expect(await page.locator('.task[data-task="nightly-import"] .ctx').textContent()).toContain(
      "failed slots2 / 2",
    )
    // A paused task shows why: by hand, by its failure policy, or held by its breaker (named).
    expect(await page.locator('.task[data-task="backup"] .reason').textContent()).toBe("manual")
    expect(await page.locator('.task[data-task="nightly-import"] .reason').textContent()).toBe(
      "failures",
    )
    expect(
      await count(
        page,
        '#overview .node[data-state="paused"] .chip[data-task="backup"][data-reason="manual"]',
      ),
    ).toBe(1)
    expect(
      await count(
        page,
        '#overview .node[data-state="paused"] .chip[data-task="nightly-import"][data-reason="failures"]',
      ),
    ).toBe(1)
    expect(await page.locator('.task[data-task="heartbeat"] .reason').isHidden()).toBe(true)
    // The breakers panel: the shared breaker and both of its tasks.
    expect(
      await page
        .locator('.breaker[data-breaker="smtp"] .b-tasks .chip')
        .evaluateAll((ns) => ns.map((n) => n.getAttribute("data-task"))),
    ).toEqual(["mail-digest", "invoice-mail"])
    // Its failure count: the 3 failed slots in a row that opened it.
    await waitUntil(
      page,
      `document.querySelector('.breaker[data-breaker="smtp"] .b-stats').textContent.includes("failures3 / 3")`,
    )

    // Timelines: failed runs and their retries, successes, the skipped and coalesced slots.
    expect(await count(page, '.task[data-task="nightly-import"] .run[data-outcome="failed"]')).toBe(
      4,
    )
    expect(await count(page, '.task[data-task="nightly-import"] .run[data-kind="retried"]')).toBe(2)
    expect(await count(page, '.task[data-task="heartbeat"] .run[data-outcome="failed"]')).toBe(0)
    expect(await count(page, ".timeline .slot")).toBeGreaterThan(10)

    // The histogram: one bar per bucket, counting every finished run.
    // Read in one go: the page re-renders between separate reads.
    const { bars, runs } = (await page.evaluate(`({
      bars: [...document.querySelectorAll("#hist rect.bar")].map((b) => Number(b.getAttribute("data-count"))),
      runs: Number(document.querySelector("#lateness-stats span:first-child b").textContent),
    })`)) as { bars: Array<number>; runs: number }
    expect(bars).toHaveLength(11)
    expect(bars.reduce((a, b) => a + b, 0)).toBe(runs)
    expect(runs).toBeGreaterThan(10)
    expect(bars.filter((c) => c > 0).length).toBeGreaterThan(0)

    // Flow control (SPEC §20): a due run held by its group's limit shows its wait on its row
    // (cause, scope, for how long) and on the overview's chip; the summary counts waits by
    // cause; a task's dedup key shows under its name. The demo's "exports" tasks take turns
    // (one at a time) and "webhook-ping" outruns its group's rate, so each wait recurs.
    await page.waitForSelector(
      '.task[data-group="exports"][data-wait="concurrency"] .wait[data-cause="concurrency"][data-scope="group:exports"]',
      { state: "attached", timeout: 30_000 },
    )
    await page.waitForSelector(
      '.task[data-task="webhook-ping"][data-wait="rate-limited"] .wait[data-scope="group:webhooks"][data-until]',
      { state: "attached", timeout: 30_000 },
    )
    await page.waitForSelector('#overview .node[data-state="scheduled"] .chip[data-wait]', {
      state: "attached",
      timeout: 30_000,
    })
    await waitUntil(
      page,
      `Number(document.querySelector('#summary [data-waiting] b[data-cause="rate-limited"]')?.textContent) >= 1`,
    )
    expect(await page.locator('.task[data-task="reindex"] .flow').textContent()).toBe(
      "dedup search-index (singleton)",
    )
    await waitUntil(
      page,
      `Number(document.querySelector('#summary [data-dedup] b[data-count="deduplicated"]')?.textContent) >= 1`,
    )
    expect(await page.locator('.task[data-task="heartbeat"] .wait').isHidden()).toBe(true)

    // The inspection stream shows transitions, and the live connection is up.
    expect(await count(page, "#feed li")).toBeGreaterThan(3)
    expect(await page.locator("#conn-text").textContent()).toBe("live")
    expect(errors).toEqual([])

    // INSPECTOR_SCREENSHOT_AFTER=ms lets more history build up first (for the README's picture).
    const settle = Number(process.env.INSPECTOR_SCREENSHOT_AFTER ?? 0)
    if (settle > 0) await page.waitForTimeout(settle)
    // The picture shows the breaker open (it is half-open only while a probe runs) and the
    // tasks paused, each with its reason.
    for (const selector of [
      '.breaker[data-breaker="smtp"][data-state="open"]',
      '.task[data-task="backup"][data-state="paused"][data-reason="manual"]',
      '.task[data-task="mail-digest"][data-state="paused"][data-reason="breaker"]',
      '.task[data-task="invoice-mail"][data-state="paused"][data-reason="breaker"]',
    ]) {
      await page.waitForSelector(selector, { state: "attached", timeout: 30_000 })
    }
    const shot =
      process.env.INSPECTOR_SCREENSHOT ?? join(tmpdir(), "tickwork-inspector", "live-view.png")
    mkdirSync(dirname(shot), { recursive: true })
    await page.screenshot({ path: shot, fullPage: true })
    console.log(`live view screenshot: ${shot}`)
    expect(existsSync(shot)).toBe(true)
  }, 240_000)
})
