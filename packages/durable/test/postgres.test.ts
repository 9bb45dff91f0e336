import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { Handler, Postgres, TaskStore } from "../src/index.ts"
import { recording, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabase()
})
afterEach(async () => {
  await db.drop()
})

const newTask = (id: string, slot: number): TaskStore.NewTask => ({
  id,
  handler: "record",
  payload: '{"n":1}',
  schedule: { kind: "once", at: slot },
  priority: 1,
  retry: Retry.none,
  missedRuns: "catch-up",
  pauseAfter: 0,
  timeoutMs: 0,
  slot,
  seq: 1,
  now: 0,
})

describe("PostgreSQL store", () => {
  it.live("runs tasks at their slots, with the same execution path as SQLite", () =>
    Effect.gen(function* () {
      const { seen, handler } = recording()
      const store = Postgres.layer({ url: db.url })
      yield* withScheduler(store, { handlers: [handler], pollInterval: 50 }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({ id: "a", handler, payload: { n: 1 }, schedule: Schedule.once(50) })
          yield* d.schedule({
            id: "r",
            handler,
            payload: { n: 2 },
            schedule: Schedule.fixedRate(100),
          })
          // Three slots of `r` take 300 ms on time; a busy machine may take longer: wait for them
          // (bounded), then check them and the one-shot.
          const ran = d
            .ledger("r")
            .pipe(Effect.map((ledger) => ledger.filter((o) => o.kind === "ran").length))
          const deadline = Date.now() + 60_000
          while ((yield* ran) < 3 || (yield* d.status("a")) !== "done") {
            if (Date.now() > deadline) break
            yield* Effect.sleep(25)
          }
          expect(yield* ran).toBeGreaterThanOrEqual(3)
          expect(yield* d.status("a")).toBe("done")
        }),
      )
      expect(seen.filter((s) => s.id === "a")).toHaveLength(1)
      for (const s of seen) expect(s.startedAt).toBeGreaterThanOrEqual(s.scheduledFor)
    }),
  )

  it.live(
    "a late completion after its lease passed to another claim is fenced out and recorded",
    () =>
      Effect.gen(function* () {
        const s = yield* TaskStore.TaskStore
        yield* s.insert([newTask("t", 0)])
        const [a] = yield* s.claim({
          owner: "A",
          now: 1_000,
          limit: 10,
          leaseMs: 300,
          handlers: ["record"],
        })
        // Not due for anyone while A's lease lasts.
        expect(
          yield* s.claim({ owner: "B", now: 1_200, limit: 10, leaseMs: 300, handlers: ["record"] }),
        ).toEqual([])
        const [b] = yield* s.claim({
          owner: "B",
          now: 1_301,
          limit: 10,
          leaseMs: 300,
          handlers: ["record"],
        })
        expect([a?.fence, a?.deliveries, b?.fence, b?.deliveries, b?.leaseOwner]).toEqual([
          1,
          1,
          2,
          2,
          "B",
        ])
        // A renews too late: its lease is gone.
        expect(yield* s.renew("A", [{ id: "t", fence: 1 }], 1_350, 300)).toEqual(new Set())
        const change = (row: TaskStore.TaskRow, owner: string, at: number): TaskStore.Change => ({
          id: row.id,
          fence: row.fence,
          update: {
            state: "done",
            slot: row.slot,
            runAt: row.runAt,
            claimableAt: row.runAt,
            attempt: 1,
            runNumber: 1,
            consecutiveFailures: 0,
            deliveries: 0,
            leaseOwner: null,
            finishedAt: at,
            lastError: null,
            seq: row.seq,
            updatedAt: at,
          },
          run: {
            taskId: row.id,
            generation: row.generation,
            slot: row.slot,
            attempt: 1,
            runAt: row.runAt,
            startedAt: at - 10,
            finishedAt: at,
            outcome: "succeeded",
            error: null,
            fence: row.fence,
            owner,
            delivery: row.deliveries,
            state: "done",
            nextRunAt: null,
          },
          events: [],
          fencedOut: {
            taskId: row.id,
            generation: row.generation,
            kind: "fenced-out",
            firstSlot: row.slot,
            lastSlot: row.slot,
            count: 1,
            cause: null,
            at,
            fence: row.fence,
            owner,
            detail: "late",
          },
        })
        expect((yield* s.commit([change(a as TaskStore.TaskRow, "A", 1_400)])).results).toEqual([
          "fenced-out",
        ])
        expect((yield* s.commit([change(b as TaskStore.TaskRow, "B", 1_450)])).results).toEqual([
          "applied",
        ])
        const runs = yield* s.runs("t")
        expect(runs.map((r) => [r.owner, r.fence, r.delivery])).toEqual([["B", 2, 2]])
        const events = yield* s.events("t")
        expect(events.map((e) => [e.kind, e.owner, e.fence])).toEqual([["fenced-out", "A", 1]])
      }).pipe(Effect.provide(Postgres.layer({ url: db.url }))),
  )

  it.live(
    "two schedulers on one database run every task once, and long runs keep their lease",
    () =>
      Effect.gen(function* () {
        const a = recording()
        const b = recording()
        const slow = (seen: Array<string>) =>
          Handler.make("slow", Schema.Struct({ ms: Schema.Number }), (p, run) =>
            Effect.andThen(
              Effect.sleep(p.ms),
              Effect.sync(() => seen.push(`${run.id}#${run.delivery}`)),
            ),
          )
        const slowSeen: Array<string> = []
        const store = Postgres.layer({ url: db.url })
        const options = (h: typeof a.handler, owner: string) => ({
          handlers: [h, slow(slowSeen)],
          owner,
          workers: 8,
          lease: 1_000,
          pollInterval: 50,
        })
        yield* withScheduler(store, options(a.handler, "A"), (da) =>
          withScheduler(store, options(b.handler, "B"), (db) =>
            Effect.gen(function* () {
              yield* da.scheduleAll(
                Array.from({ length: 300 }, (_, k) => ({
                  id: `t${k}`,
                  handler: "record",
                  payload: { n: k },
                  schedule: Schedule.once(k % 50),
                })),
              )
              // Runs for four lease periods: renewed every third of one, never claimed twice.
              yield* db.schedule({
                id: "long",
                handler: "slow",
                payload: { ms: 4_000 },
                schedule: Schedule.once(0),
              })
              for (let k = 0; k < 600; k++) {
                const stats = yield* da.stats
                if (stats.tasks.done === 301) break
                yield* Effect.sleep(50)
              }
              expect((yield* da.stats).tasks.done).toBe(301)
            }),
          ),
        )
        const ids = [...a.seen, ...b.seen].map((s) => s.id).sort()
        expect(ids).toEqual(Array.from({ length: 300 }, (_, k) => `t${k}`).sort())
        expect(a.seen.length).toBeGreaterThan(0)
        expect(b.seen.length).toBeGreaterThan(0)
        expect(slowSeen).toEqual(["long#1"])
      }),
    60_000,
  )

  it.live(
    "a process that only schedules wakes the workers at once (LISTEN/NOTIFY), not at their poll",
    // A task with tags is inserted in a transaction, one without in a single statement: each
    // notifies inside its own round trip. The inserts are further apart than the bound, so no
    // task is picked up on the notice of the next one.
    () =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const store = Postgres.layer({ url: db.url })
        const lateness: Array<number> = []
        yield* withScheduler(store, { handlers: [handler], pollInterval: "10 seconds" }, (worker) =>
          withScheduler(store, { handlers: [handler], claim: false }, (api) =>
            Effect.gen(function* () {
              yield* Effect.sleep(200) // the worker is listening and asleep
              for (let k = 0; k < 4; k++) {
                yield* api.schedule({
                  id: `n${k}`,
                  handler,
                  payload: { n: k },
                  schedule: Schedule.once(0),
                  ...(k % 2 === 1 ? { tags: ["odd"] } : {}),
                })
                yield* Effect.sleep(700)
              }
              void worker
            }),
          ),
        )
        for (const s of seen) lateness.push(s.startedAt - s.scheduledFor)
        expect(seen).toHaveLength(4)
        expect(Math.max(...lateness)).toBeLessThan(500)
      }),
  )
})
