/**
 * End to end, in real time: a durable worker process runs two recurring tasks (`beat` and
 * `other`, every 200 ms) on a store, and the CLI pauses `beat` beside it. The worker must start
 * no further run of `beat` while `other` keeps running (so the worker is seen to be alive and
 * dispatching: the check waits for `other`'s runs, not for a time); after `resume`, `beat` runs
 * again. On SQLite (the worker opens the file with `exclusive: false`) and on PostgreSQL.
 * Nothing waits on a timer: each step polls for a condition under a generous deadline.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { DurableScheduler, StoreAdmin } from "@tickwork/durable"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { freshDatabase } from "./pg.ts"
import { tempStore } from "./store.ts"
import { tickwork } from "./support.ts"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const worker = fileURLToPath(new URL("./fixtures/worker.ts", import.meta.url))
const DEADLINE = 90_000

let running: ChildProcess | undefined
let output = ""

afterEach(async () => {
  const p = running
  running = undefined
  if (p === undefined || p.exitCode !== null) return
  const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()))
  p.kill("SIGTERM")
  const timer = setTimeout(() => p.kill("SIGKILL"), 20_000)
  await exited
  clearTimeout(timer)
}, 30_000)

/** Starts the worker on `store`, logging runs to `log`; resolves once it printed "ready". */
const startWorker = (store: string, log: string): Promise<void> =>
  new Promise((resolve, reject) => {
    output = ""
    const p = spawn(
      process.execPath,
      ["--conditions=@tickwork/source", "--import", "tsx", worker, store, log],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    )
    running = p
    p.stderr?.on("data", (d) => {
      output += String(d)
    })
    createInterface({ input: p.stdout as NonNullable<typeof p.stdout> }).on("line", (line) => {
      output += `${line}\n`
      if (line === "ready") resolve()
    })
    p.once("exit", (code) => reject(new Error(`the worker exited (${code}):\n${output}`)))
  })

/** Polls `condition` every 50 ms until it holds, failing after `DEADLINE` ms. */
const until = async (what: string, condition: () => boolean | Promise<boolean>) => {
  const deadline = Date.now() + DEADLINE
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}\n${output}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const cli = (...args: ReadonlyArray<string>) => Effect.runPromise(tickwork(...args))

const pauseAndResume = async (store: string, log: string) => {
  const starts = (id: string) =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l.startsWith(`start ${id} `)).length
      : 0
  await startWorker(store, log)
  await until("both tasks ran twice", () => starts("beat") >= 2 && starts("other") >= 2)

  const paused = await cli("pause", "beat", "--store", store, "--json")
  expect(paused.code, paused.stderr).toBe(0)
  expect(JSON.parse(paused.stdout)).toMatchObject({ id: "beat", changed: true })
  // Paused at once if it was waiting, or when its run in progress ends.
  await until("beat is paused", async () => {
    const out = await cli("status", "beat", "--store", store, "--json")
    return (JSON.parse(out.stdout) as StoreAdmin.TaskDetails).state === "paused"
  })
  const frozen = starts("beat")
  const otherBefore = starts("other")
  // The worker goes on running `other`: five more of its runs are many poll and claim passes.
  await until("other ran five more times", () => starts("other") >= otherBefore + 5)
  expect(starts("beat")).toBe(frozen)
  const listed = await cli("tasks", "--store", store, "--state", "paused", "--json")
  expect((JSON.parse(listed.stdout) as StoreAdmin.TaskPage).tasks.map((t) => t.id)).toEqual([
    "beat",
  ])

  const resumed = await cli("resume", "beat", "--store", store, "--json")
  expect(resumed.code, resumed.stderr).toBe(0)
  expect(JSON.parse(resumed.stdout)).toMatchObject({ changed: true, state: "scheduled" })
  await until("beat runs again", () => starts("beat") > frozen)

  const ledger = await cli("ledger", "beat", "--store", store, "--json")
  const kinds = (JSON.parse(ledger.stdout) as Array<DurableScheduler.DurableOccurrence>).map(
    (o) => o.kind,
  )
  expect(kinds.filter((k) => k === "paused" || k === "resumed")).toEqual(["paused", "resumed"])
  expect(kinds.lastIndexOf("ran")).toBeGreaterThan(kinds.indexOf("resumed"))
  // The CLI's own writes are not runs: every run was the worker's.
  const stats = await cli("stats", "--store", store, "--json")
  const owners = (JSON.parse(stats.stdout) as StoreAdmin.StoreStats).owners.map((o) => o.owner)
  expect(owners).toEqual([`worker-${running?.pid}`])
}

describe("a running worker sees a CLI pause", () => {
  it(
    "on SQLite: no run of the paused task starts until it is resumed",
    async () => {
      const t = tempStore()
      try {
        await pauseAndResume(t.file, `${t.file}.log`)
      } finally {
        t.cleanup()
      }
    },
    4 * DEADLINE,
  )

  it(
    "on PostgreSQL: no run of the paused task starts until it is resumed",
    async () => {
      const db = await freshDatabase()
      const t = tempStore()
      try {
        await pauseAndResume(db.url, `${t.file}.log`)
      } finally {
        const p = running
        if (p !== undefined && p.exitCode === null) {
          const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()))
          p.kill("SIGTERM")
          await exited
        }
        await db.drop()
        t.cleanup()
      }
    },
    4 * DEADLINE,
  )
})
