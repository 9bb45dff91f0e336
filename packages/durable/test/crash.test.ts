/**
 * Crash tests: a child process streams schedules and completions into a SQLite store and is
 * killed with SIGKILL in the middle, twice; the store is then reopened and drained here. Nothing
 * committed may be lost, and nothing may run twice except runs in flight at a kill.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { child } from "./children.ts"
import { drain, handler } from "./fixtures/crash-drain.ts"
import { sqlite, tempDir, withScheduler } from "./helpers.ts"

/** Reads what the killed process left: committed tasks, runs and what was running. */
const snapshot = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    const tasks = db.prepare("SELECT id, state FROM tickwork_tasks").all() as Array<{
      id: string
      state: string
    }>
    const running = db
      .prepare("SELECT id, slot, attempt FROM tickwork_tasks WHERE state = 'running'")
      .all() as Array<{ id: string; slot: number; attempt: number }>
    const runs = db.prepare("SELECT task_id, slot, attempt FROM tickwork_runs").all() as Array<{
      task_id: string
      slot: number
      attempt: number
    }>
    const integrity = db.pragma("integrity_check", { simple: true })
    return { tasks, running, runs, integrity }
  } finally {
    db.close()
  }
}

/** Runs the worker until it has acked at least `acks` tasks, then SIGKILLs it. */
const runAndKill = async (file: string, log: string, prefix: string, acks: number) => {
  const acked: Array<string> = []
  let killed = false
  const c = child("crash-worker.ts", [file, log, prefix], (line) => {
    if (line.startsWith("ack ")) acked.push(line.slice(4))
    if (acked.length >= acks && !killed) {
      killed = true
      c.process.kill("SIGKILL")
    }
  })
  const code = await c.exited
  return { acked, code, killed }
}

describe("crash safety (SQLite, SIGKILL)", () => {
  it.live(
    "nothing committed is lost; only runs in flight at a kill run twice",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const log = t.file("effects.log")
        const inFlight = new Set<string>()
        const acked: Array<string> = []
        let committedRuns = new Set<string>()
        for (const [round, acks] of [
          ["a", 150],
          ["b", 120],
        ] as const) {
          const r = yield* Effect.promise(() => runAndKill(file, log, round, acks))
          expect(r.killed).toBe(true)
          acked.push(...r.acked)
          const s = snapshot(file)
          expect(s.integrity).toBe("ok")
          const stored = new Set(s.tasks.map((x) => x.id))
          // Every task whose schedule was acknowledged is in the store.
          expect(acked.filter((id) => !stored.has(id))).toEqual([])
          const runs = new Set(s.runs.map((x) => `${x.task_id} ${x.slot} ${x.attempt}`))
          // Every run committed before this kill is still there.
          expect([...committedRuns].filter((k) => !runs.has(k))).toEqual([])
          committedRuns = runs
          for (const x of s.running) inFlight.add(`${x.id} ${x.slot} ${x.attempt}`)
        }
        expect(inFlight.size).toBeGreaterThan(0)
        yield* withScheduler(sqlite(file), { handlers: [handler(log)], workers: 8 }, (d) =>
          drain(d, acked),
        )
        const s = snapshot(file)
        const runs = s.runs.map((x) => `${x.task_id} ${x.slot} ${x.attempt}`)
        // The ledger has one row per (task, slot, attempt) by its key; every acked one-shot ran.
        expect(new Set(runs).size).toBe(runs.length)
        const oneShots = acked.filter((id) => Number(id.split("-")[1]) % 25 !== 0)
        expect(s.tasks.filter((x) => oneShots.includes(x.id) && x.state !== "done")).toEqual([])
        // Side effects: every committed run started at least once; a second start only for
        // runs that were in flight at a kill.
        const starts = new Map<string, number>()
        for (const line of readFileSync(log, "utf8").split("\n")) {
          const [kind, id, slot, attempt] = line.split(" ")
          if (kind !== "start") continue
          const key = `${id} ${slot} ${attempt}`
          starts.set(key, (starts.get(key) ?? 0) + 1)
        }
        for (const key of runs) expect(starts.get(key) ?? 0).toBeGreaterThanOrEqual(1)
        const twice = [...starts].filter(([, n]) => n > 1).map(([key]) => key)
        expect(twice.filter((key) => !inFlight.has(key))).toEqual([])
        console.log(
          `crash test: ${acked.length} tasks acked over 2 kills, ${runs.length} runs committed, ` +
            `${inFlight.size} in flight at the kills, ${twice.length} of them ran twice`,
        )
        t.cleanup()
      }),
    30_000,
  )
})
