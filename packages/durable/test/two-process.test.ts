/**
 * Two worker processes on one PostgreSQL database, 10k tasks. One worker is killed with SIGKILL
 * in the middle and a replacement started. Checked against the run ledger and the workers' own
 * effects logs: every (task, slot) runs; no task runs twice at once; a (task, slot, attempt)
 * runs twice only if it was in flight at the kill; a late completion after a lost lease is
 * rejected and recorded.
 */
import { existsSync, readFileSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Clock, Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { Postgres } from "../src/index.ts"
import { child } from "./children.ts"
import { job, type LogLine, parseLog } from "./fixtures/job.ts"
import { tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabase()
})
afterEach(async () => {
  await db.drop()
})

/** Runs a query on the test database. */
const query = <A extends object>(url: string, text: string): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), (sql) =>
        sql.unsafe<A>(text),
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

/** Starts a worker and resolves once it runs; counts its runs. */
const worker = async (url: string, log: string, owner: string, leaseMs: number) => {
  const state = { ran: 0 }
  let ready: () => void = () => {}
  const started = new Promise<void>((resolve) => {
    ready = resolve
  })
  const c = child("pg-worker.ts", [url, log, owner, String(leaseMs)], (line) => {
    if (line === "ready") ready()
    else if (line.startsWith("ran ")) state.ran = Number(line.slice(4))
  })
  await Promise.race([
    started,
    c.exited.then((code) => Promise.reject(new Error(`${owner} exited ${code}`))),
  ])
  return { ...c, state }
}

const until = async (what: string, check: () => boolean | Promise<boolean>, ms: number) => {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const readLog = (file: string): Array<LogLine> =>
  existsSync(file) ? parseLog(readFileSync(file, "utf8")) : []

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

describe("two processes, one PostgreSQL database", () => {
  it.live(
    "10k tasks: every (task, slot) runs, never twice at once; duplicates only for runs in flight at a kill",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const logs = { A: t.file("A.log"), B: t.file("B.log"), A2: t.file("A2.log") }
        const store = Postgres.layer({ url: db.url })
        const seed = job(t.file("seed.log"), "seed")
        const period = 300
        const recurring = Array.from({ length: 200 }, (_, k) => `r${k}`)
        const base = (yield* Clock.currentTimeMillis) + 2_500
        /** When the recurring tasks were scheduled: their first slot is 2.5 s + k after. */
        const recurringFrom = { before: 0, after: 0 }
        // Schedule only: the workers run everything.
        yield* withScheduler(store, { handlers: [seed], claim: false }, (api) =>
          Effect.gen(function* () {
            yield* api.scheduleAll(
              Array.from({ length: 9_800 }, (_, k) => ({
                id: `o${k}`,
                handler: seed,
                payload: { ms: k % 6 },
                schedule: Schedule.at(base + (k % 2_500)),
              })),
            )
            recurringFrom.before = yield* Clock.currentTimeMillis
            yield* api.scheduleAll(
              recurring.map((id, k) => ({
                id,
                handler: seed,
                payload: { ms: 3 },
                schedule: Schedule.fixedRate(period, { delay: 2_500 + k }),
              })),
            )
            recurringFrom.after = yield* Clock.currentTimeMillis
          }),
        )
        const started = Date.now()
        const a = yield* Effect.promise(() => worker(db.url, logs.A, "A", 1_000))
        const b = yield* Effect.promise(() => worker(db.url, logs.B, "B", 1_000))
        yield* Effect.promise(() => until("A to run 2,000", () => a.state.ran >= 2_000, 30_000))
        a.process.kill("SIGKILL")
        const killedAt = Date.now()
        yield* Effect.promise(() => a.exited)
        const a2 = yield* Effect.promise(() => worker(db.url, logs.A2, "A2", 1_000))
        yield* Effect.promise(() =>
          until(
            "every one-shot to finish",
            async () => {
              const [row] = await query<{ n: string }>(
                db.url,
                "SELECT count(*)::text AS n FROM tickwork_tasks WHERE state = 'done'",
              )
              return Number(row?.n) === 9_800
            },
            60_000,
          ),
        )
        const allDone = Date.now()
        // Each recurring task runs at least four slots before it is stopped (a busy machine may
        // take longer to get there than the one-shots take to finish).
        yield* Effect.promise(() =>
          until(
            "every recurring task to run four slots",
            async () => {
              const [row] = await query<{ n: string }>(
                db.url,
                "SELECT count(*)::text AS n FROM (SELECT task_id FROM tickwork_runs WHERE task_id LIKE 'r%' GROUP BY task_id HAVING count(*) >= 4) t",
              )
              return Number(row?.n) === recurring.length
            },
            60_000,
          ),
        )
        // Stop the recurring tasks; let runs in flight finish, then stop the workers. A run that
        // ends meanwhile schedules its next slot (possibly due at once): cancel again until no
        // recurring task is scheduled or running, so no run can start before the kill.
        yield* Effect.promise(() =>
          until(
            "recurring tasks to stop and their runs in flight to end",
            async () => {
              await query(
                db.url,
                "UPDATE tickwork_tasks SET state = 'cancelled' WHERE id LIKE 'r%' AND state = 'scheduled'",
              )
              const live = await query(
                db.url,
                "SELECT 1 FROM tickwork_tasks WHERE state IN ('scheduled', 'running')",
              )
              return live.length === 0
            },
            30_000,
          ),
        )
        b.process.kill("SIGKILL")
        a2.process.kill("SIGKILL")
        yield* Effect.promise(() => Promise.all([b.exited, a2.exited]))

        const runs = yield* Effect.promise(() =>
          query<{ task_id: string; slot: string; attempt: number; owner: string }>(
            db.url,
            "SELECT task_id, slot::text, attempt, owner FROM tickwork_runs",
          ),
        )
        const runKeys = runs.map((r) => `${r.task_id} ${r.slot} ${r.attempt}`)
        expect(new Set(runKeys).size).toBe(runKeys.length)
        // Every one-shot ran (its run committed), exactly once in the ledger.
        const oneShots = runs.filter((r) => r.task_id.startsWith("o"))
        expect(new Set(oneShots.map((r) => r.task_id)).size).toBe(9_800)
        // Every recurring task ran each slot of its grid, none skipped, up to where it stopped.
        for (const [k, id] of recurring.entries()) {
          const slots = runs
            .filter((r) => r.task_id === id)
            .map((r) => Number(r.slot))
            .sort((x, y) => x - y)
          expect(slots.length).toBeGreaterThan(3)
          const first = slots[0] as number
          expect(first).toBeGreaterThanOrEqual(recurringFrom.before + 2_500 + k)
          expect(first).toBeLessThanOrEqual(recurringFrom.after + 2_500 + k)
          expect(slots).toEqual(slots.map((_, i) => first + i * period))
        }
        // The effects logs of the three processes.
        const lines = [...readLog(logs.A), ...readLog(logs.B), ...readLog(logs.A2)]
        const starts = new Map<string, number>()
        for (const l of lines) {
          if (l.kind !== "start") continue
          const key = `${l.id} ${l.slot} ${l.attempt}`
          starts.set(key, (starts.get(key) ?? 0) + 1)
        }
        for (const key of runKeys) expect(starts.get(key) ?? 0).toBeGreaterThanOrEqual(1)
        const twice = [...starts].filter(([, n]) => n > 1).map(([key]) => key)
        // In flight at the kill: a run the killed process started and whose completion it never
        // committed, by its own effects log (a run may end and be cut before its commit). The
        // store's rows left running by A are not a sound measure: the other process may claim
        // them before this test reads them.
        const cut = new Set<string>()
        for (const l of readLog(logs.A)) {
          const key = `${l.id} ${l.slot} ${l.attempt}`
          if (l.kind === "start") cut.add(key)
          else if (l.kind === "commit") cut.delete(key)
        }
        expect(twice.filter((key) => !cut.has(key))).toEqual([])
        // No task ran twice at once: per task, each run's interval ends before the next starts.
        // A run cut off by the kill ends at the kill.
        const intervals = new Map<string, Array<[number, number]>>()
        const open = new Map<string, LogLine>()
        for (const l of lines) {
          const key = `${l.id} ${l.slot} ${l.attempt} ${l.fence}`
          if (l.kind === "start") open.set(key, l)
          else {
            const s = open.get(key)
            open.delete(key)
            if (s !== undefined) {
              const list = intervals.get(l.id) ?? []
              list.push([s.at, l.at])
              intervals.set(l.id, list)
            }
          }
        }
        for (const [, s] of open) {
          expect(s.owner).toBe("A") // only the killed process left runs without an end
          const list = intervals.get(s.id) ?? []
          list.push([s.at, killedAt])
          intervals.set(s.id, list)
        }
        let overlaps = 0
        for (const [, list] of intervals) {
          list.sort((x, y) => x[0] - y[0])
          for (let i = 1; i < list.length; i++) {
            if ((list[i] as [number, number])[0] < (list[i - 1] as [number, number])[1]) overlaps++
          }
        }
        expect(overlaps).toBe(0)
        const byOwner = (o: string) => runs.filter((r) => r.owner === o).length
        expect(byOwner("A")).toBeGreaterThan(0)
        expect(byOwner("B")).toBeGreaterThan(0)
        expect(byOwner("A2")).toBeGreaterThan(0)
        const late = lines
          .filter((l) => l.kind === "start" && l.id.startsWith("o") && l.delivery === 1)
          .map((l) => l.at - l.slot)
          .sort((x, y) => x - y)
        console.log(
          `two processes: ${runs.length} runs (${oneShots.length} one-shots, ${runs.length - oneShots.length} recurring) ` +
            `in ${((allDone - started) / 1000).toFixed(1)} s from the workers' start; by owner A ${byOwner("A")}, ` +
            `B ${byOwner("B")}, A2 ${byOwner("A2")}; ${cut.size} in flight at the kill, ` +
            `${twice.length} ran twice; one-shot lateness p50 ${percentile(late, 50)} ms, ` +
            `p99 ${percentile(late, 99)} ms, max ${late[late.length - 1]} ms`,
        )
        t.cleanup()
      }),
    120_000,
  )

  it.live(
    "a process stalled past its lease loses the run to the other; its late completion is fenced out",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const logs = { A: t.file("A.log"), B: t.file("B.log") }
        const seed = job(t.file("seed.log"), "seed")
        const a = yield* Effect.promise(() => worker(db.url, logs.A, "A", 1_000))
        const b = yield* Effect.promise(() => worker(db.url, logs.B, "B", 1_000))
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [seed], claim: false },
          (api) =>
            api.schedule({
              id: "stall",
              handler: seed,
              payload: { ms: 0, stall: 3_000 },
              schedule: Schedule.once(0),
            }),
        )
        yield* Effect.promise(() =>
          until(
            "the fenced-out completion",
            async () =>
              (await query(db.url, "SELECT 1 FROM tickwork_events WHERE kind = 'fenced-out'"))
                .length > 0,
            20_000,
          ),
        )
        a.process.kill("SIGKILL")
        b.process.kill("SIGKILL")
        yield* Effect.promise(() => Promise.all([a.exited, b.exited]))
        const runs = yield* Effect.promise(() =>
          query<{ owner: string; delivery: number; fence: string }>(
            db.url,
            "SELECT owner, delivery, fence::text FROM tickwork_runs WHERE task_id = 'stall'",
          ),
        )
        const events = yield* Effect.promise(() =>
          query<{ kind: string; owner: string; fence: string; detail: string }>(
            db.url,
            "SELECT kind, owner, fence::text, detail FROM tickwork_events WHERE task_id = 'stall'",
          ),
        )
        expect(runs).toHaveLength(1)
        const [run] = runs
        const [event] = events
        expect(run?.delivery).toBe(2)
        expect(events).toHaveLength(1)
        expect(event?.kind).toBe("fenced-out")
        expect(event?.owner).not.toBe(run?.owner)
        expect(Number(event?.fence)).toBeLessThan(Number(run?.fence))
        expect(event?.detail).toContain("delivery 1")
        t.cleanup()
      }),
    60_000,
  )
})
