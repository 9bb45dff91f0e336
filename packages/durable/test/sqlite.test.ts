import { describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Scheduler } from "@tickwork/runtime"
import Database from "better-sqlite3"
import { Clock, Data, DateTime, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, TaskStore } from "../src/index.ts"
import * as Rows from "../src/internal/rows.ts"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

class Boom extends Data.TaggedError("Boom")<{ readonly attempt: number }> {}

/** Fails while `run.attempt <= failUntil`; records every start as `id:slot#attempt@startedAt`. */
const flaky = () => {
  const seen: Array<string> = []
  const handler = Handler.make("flaky", Schema.Struct({ failUntil: Schema.Number }), (p, run) =>
    Effect.suspend(() => {
      seen.push(`${run.id}:${run.slot}#${run.attempt}@${run.startedAt}`)
      return run.attempt <= p.failUntil
        ? Effect.fail(new Boom({ attempt: run.attempt }))
        : Effect.void
    }),
  )
  return { seen, handler }
}

/** Sleeps `ms` (on the test's clock); records `id@start-end`. */
const slow = () => {
  const seen: Array<string> = []
  const handler = Handler.make("slow", Schema.Struct({ ms: Schema.Number }), (p, run) =>
    Effect.gen(function* () {
      yield* Effect.sleep(p.ms)
      seen.push(`${run.id}@${run.startedAt}-${run.startedAt + p.ms}`)
    }),
  )
  return { seen, handler }
}

const inStore = <A>(
  body: (store: Layer.Layer<TaskStore.TaskStore, unknown>) => Effect.Effect<A, unknown>,
) =>
  Effect.gen(function* () {
    const t = tempDir()
    try {
      return yield* body(sqlite(t.file()))
    } finally {
      t.cleanup()
    }
  })

describe("SQLite store under TestClock", () => {
  it.effect(
    "runs once, at, fixed-rate, fixed-delay and cron tasks at their slots",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const { seen, handler } = recording()
          const s = slow()
          yield* withScheduler(store, { handlers: [handler, s.handler] }, (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                id: "once",
                handler,
                payload: { n: 1 },
                schedule: Schedule.once(30),
              })
              yield* d.schedule({ id: "at", handler, payload: { n: 2 }, schedule: Schedule.at(45) })
              yield* d.schedule({
                id: "rate",
                handler,
                payload: { n: 3 },
                schedule: Schedule.fixedRate(25, { delay: 5 }),
              })
              // Each run lasts 7 ms: 10, ends 17 → 37, ends 44 → 64.
              yield* d.schedule({
                id: "delay",
                handler: s.handler,
                payload: { ms: 7 },
                schedule: Schedule.fixedDelay(20, { delay: 10 }),
              })
              yield* d.schedule({
                id: "cron",
                handler,
                payload: { n: 5 },
                schedule: Schedule.cron("*/20 * * * * *"),
              })
              yield* advance(d, 60)
              expect(yield* d.status("once")).toBe("done")
              expect(yield* d.status("rate")).toBe("scheduled")
              yield* advance(d, 40_000)
            }),
          )
          expect(
            seen.filter((x) => x.startedAt <= 60).map((x) => `${x.id}@${x.startedAt}`),
          ).toEqual(["rate@5", "once@30", "rate@30", "at@45", "rate@55"])
          expect(s.seen.slice(0, 3)).toEqual(["delay@10-17", "delay@37-44", "delay@64-71"])
          expect(seen.filter((x) => x.id === "cron").map((x) => x.startedAt)).toEqual([
            20_000, 40_000,
          ])
        }),
      ),
    // Hundreds of virtual wake-ups: seconds of real time on a loaded machine.
    60_000,
  )

  it.effect("a handler gets its decoded payload and (id, slot, attempt, delivery, fence)", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const runs: Array<{ payload: unknown; run: Handler.DurableRun }> = []
        const Payload = Schema.Struct({
          due: Schema.DateTimeUtcFromString,
          tags: Schema.Array(Schema.String),
        })
        const handler = Handler.make("typed", Payload, (payload, run) =>
          Effect.sync(() => {
            runs.push({ payload, run })
          }),
        )
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            const due = DateTime.makeUnsafe(Date.UTC(2030, 0, 1))
            yield* d.schedule({
              id: "t",
              handler,
              payload: { due, tags: ["a"] },
              schedule: Schedule.fixedRate(100, { delay: 100 }),
            })
            const info = Option.getOrThrow(yield* d.info("t"))
            expect(info.payload).toEqual({ due: "2030-01-01T00:00:00.000Z", tags: ["a"] })
            expect(info.schedule).toEqual({ kind: "fixed-rate", first: 100, period: 100 })
            yield* advance(d, 250)
          }),
        )
        expect(runs).toHaveLength(2)
        const [first, second] = runs as [(typeof runs)[number], (typeof runs)[number]]
        expect(DateTime.isDateTime((first.payload as { due: unknown }).due)).toBe(true)
        expect(first?.run).toMatchObject({
          id: "t",
          slot: 100,
          key: "t@100",
          attempt: 1,
          delivery: 1,
          runNumber: 1,
          scheduledFor: 100,
          startedAt: 100,
          handler: "typed",
        })
        expect(second?.run).toMatchObject({ slot: 200, key: "t@200", runNumber: 2 })
        expect((second?.run.fence ?? 0) > (first?.run.fence ?? 0)).toBe(true)
      }),
    ),
  )

  it.effect("retries a failed run at failedAt + the core's backoff, then goes on", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { seen, handler } = flaky()
        const ledger = yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "once",
              handler,
              payload: { failUntil: 2 },
              schedule: Schedule.once(0),
              retry: { maxRetries: 2, base: 100 },
            })
            yield* d.schedule({
              id: "gives-up",
              handler,
              payload: { failUntil: 9 },
              schedule: Schedule.once(0),
              retry: { maxRetries: 1, base: 50 },
            })
            yield* advance(d, 1_000)
            expect(yield* d.status("once")).toBe("done")
            expect(yield* d.status("gives-up")).toBe("failed")
            const info = Option.getOrThrow(yield* d.info("gives-up"))
            expect(info.lastError).toBe("Boom")
            return yield* d.ledger("once")
          }),
        )
        expect(seen).toEqual([
          "once:0#1@0",
          "gives-up:0#1@0",
          "gives-up:0#2@50",
          "once:0#2@100",
          "once:0#3@300",
        ])
        expect(
          ledger.map((o) =>
            o.kind === "ran" ? `${o.attempt}:${o.outcome}->${o.state}@${o.nextRunAt}` : o.kind,
          ),
        ).toEqual(["1:failed->scheduled@100", "2:failed->scheduled@300", "3:succeeded->done@null"])
      }),
    ),
  )

  it.effect("a recurring task that keeps failing stops after pauseAfterConsecutiveFailures", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { seen, handler } = flaky()
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: { failUntil: 99 },
              schedule: Schedule.fixedRate(100),
              pauseAfterConsecutiveFailures: 3,
            })
            yield* advance(d, 1_000)
            expect(yield* d.status("r")).toBe("paused")
          }),
        )
        expect(seen).toEqual(["r:0#1@0", "r:100#1@100", "r:200#1@200"])
      }),
    ),
  )

  it.effect("equal slots run by priority, then in the order they were pushed", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        yield* withScheduler(store, { handlers: [handler], workers: 1 }, (d) =>
          Effect.gen(function* () {
            for (const [id, priority] of [
              ["n1", "normal"],
              ["l1", "low"],
              ["h1", "high"],
              ["n2", "normal"],
              ["h2", "high"],
            ] as const) {
              yield* d.schedule({
                id,
                handler,
                payload: { n: 0 },
                schedule: Schedule.at(10),
                priority,
              })
            }
            yield* advance(d, 20)
          }),
        )
        expect(seen.map((s) => s.id)).toEqual(["h1", "h2", "n1", "n2", "l1"])
      }),
    ),
  )

  it.effect(
    "cancel: a scheduled task never runs; a running run finishes and is recorded, or is interrupted",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const { seen, handler } = slow()
          yield* withScheduler(store, { handlers: [handler] }, (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                id: "later",
                handler,
                payload: { ms: 5 },
                schedule: Schedule.once(100),
              })
              yield* d.schedule({
                id: "coop",
                handler,
                payload: { ms: 50 },
                schedule: Schedule.fixedRate(200),
              })
              yield* d.schedule({
                id: "int",
                handler,
                payload: { ms: 50 },
                schedule: Schedule.fixedRate(200),
              })
              yield* advance(d, 10)
              expect(yield* d.cancel("later")).toBe(true)
              expect(yield* d.cancel("coop")).toBe(true)
              expect(yield* d.cancel("int", { interrupt: true })).toBe(true)
              expect(yield* d.cancel("later")).toBe(false)
              expect(yield* d.cancel("nobody")).toBe(false)
              yield* advance(d, 1_000)
              expect(yield* d.status("later")).toBe("cancelled")
              expect(yield* d.status("coop")).toBe("cancelled")
              expect(yield* d.status("int")).toBe("cancelled")
              const coop = yield* d.ledger("coop")
              expect(
                coop.map(
                  (o) =>
                    `${o.kind}${o.kind === "ran" ? `:${o.outcome}:${o.state}` : `:${o.cause}`}`,
                ),
              ).toEqual(["cancelled:running", "ran:succeeded:cancelled"])
              const int = yield* d.ledger("int")
              expect(int.map((o) => (o.kind === "ran" ? `ran:${o.outcome}` : o.kind))).toEqual([
                "cancelled",
                "ran:interrupted",
              ])
            }),
          )
          expect(seen).toEqual(["coop@0-50"])
        }),
      ),
  )

  it.effect(
    "an id is reused once its task is final, with a new generation; a live id is a DuplicateTaskId",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const { seen, handler } = recording()
          yield* withScheduler(store, { handlers: [handler] }, (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                id: "x",
                handler,
                payload: { n: 1 },
                schedule: Schedule.once(10),
              })
              const dup = yield* Effect.flip(
                d.schedule({ id: "x", handler, payload: { n: 2 }, schedule: Schedule.once(10) }),
              )
              expect(dup._tag).toBe("DuplicateTaskId")
              yield* advance(d, 20)
              yield* d.schedule({
                id: "x",
                handler,
                payload: { n: 3 },
                schedule: Schedule.once(10),
              })
              const info = Option.getOrThrow(yield* d.info("x"))
              expect(info.generation).toBe(2)
              expect(info.state).toBe("scheduled")
              yield* advance(d, 20)
              const ledger = yield* d.ledger("x")
              expect(
                ledger.map((o) => (o.kind === "ran" ? `${o.generation}@${o.finishedAt}` : o.kind)),
              ).toEqual(["1@10", "2@30"])
            }),
          )
          expect(seen.map((s) => s.payload)).toEqual([{ n: 1 }, { n: 3 }])
        }),
      ),
  )

  it.effect("scheduleAll writes all tasks or none", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { handler } = recording()
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            const bad = yield* Effect.flip(
              d.scheduleAll([
                { id: "a", handler, payload: { n: 1 }, schedule: Schedule.once(10) },
                { id: "b", handler, payload: { n: "two" } as never, schedule: Schedule.once(10) },
              ]),
            )
            expect(bad._tag).toBe("InvalidPayload")
            expect((yield* d.stats).tasks.scheduled).toBe(0)
            yield* d.schedule({ id: "c", handler, payload: { n: 3 }, schedule: Schedule.once(10) })
            const dup = yield* Effect.flip(
              d.scheduleAll(
                Array.from({ length: 1_000 }, (_, k) => ({
                  id: k === 999 ? "c" : `t${k}`,
                  handler,
                  payload: { n: k },
                  schedule: Schedule.once(10),
                })),
              ),
            )
            expect(dup._tag).toBe("DuplicateTaskId")
            expect((yield* d.stats).tasks.scheduled).toBe(1)
            const ids = yield* d.scheduleAll(
              Array.from({ length: 1_000 }, (_, k) => ({
                id: `t${k}`,
                handler,
                payload: { n: k },
                schedule: Schedule.once(10),
              })),
            )
            expect(ids).toHaveLength(1_000)
            yield* advance(d, 20)
            expect((yield* d.stats).tasks.done).toBe(1_001)
          }),
        )
      }),
    ),
  )

  it.effect("a run past its timeout is interrupted and recorded timed-out", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { handler } = slow()
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "t",
              handler,
              payload: { ms: 500 },
              schedule: Schedule.once(0),
              timeout: 100,
            })
            yield* advance(d, 1_000)
            const [ran] = yield* d.ledger("t")
            expect(ran).toMatchObject({
              kind: "ran",
              outcome: "timed-out",
              error: "timed out after 100 ms",
              finishedAt: 100,
            })
            expect(yield* d.status("t")).toBe("failed")
          }),
        )
      }),
    ),
  )

  it.effect("in-memory tasks share the same runtime pool", () =>
    inStore((store) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const closures: Array<number> = []
        const nested: Array<string> = []
        yield* Effect.scoped(
          Effect.gen(function* () {
            const d = yield* DurableScheduler.DurableScheduler
            const s = yield* Scheduler.Scheduler
            yield* d.schedule({
              id: "durable",
              handler,
              payload: { n: 1 },
              schedule: Schedule.once(10),
            })
            yield* s.schedule({
              id: "closure",
              schedule: Schedule.once(10),
              job: (run) => Effect.sync(() => closures.push(run.startedAt)),
            })
            yield* advance(d, 20)
            nested.push(...(yield* s.tasks()).map((t) => t.id).filter((id) => id !== "closure"))
          }).pipe(
            Effect.provide(
              DurableScheduler.layer({ handlers: [handler] }).pipe(Layer.provide(store)),
            ),
          ),
        )
        expect(seen.map((s) => s.startedAt)).toEqual([10])
        expect(closures).toEqual([10])
        // A durable run is no task of the runtime scheduler: one lifecycle, one ledger row.
        expect(nested).toEqual([])
      }),
    ),
  )

  it.effect(
    "a stored payload that no longer matches its handler's schema fails the run with PayloadDecodeError",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const v1 = Handler.make("h", Schema.Struct({ n: Schema.Number }), () => Effect.void)
          const v2 = Handler.make("h", Schema.Struct({ n: Schema.String }), () => Effect.void)
          yield* withScheduler(store, { handlers: [v1] }, (d) =>
            d.schedule({ id: "p", handler: v1, payload: { n: 1 }, schedule: Schedule.once(10) }),
          )
          yield* withScheduler(store, { handlers: [v2] }, (d) =>
            Effect.gen(function* () {
              yield* advance(d, 20)
              const [ran] = yield* d.ledger("p")
              expect(ran).toMatchObject({ kind: "ran", outcome: "failed" })
              expect(ran?.kind === "ran" && ran.error).toMatch(
                /^PayloadDecodeError: the stored payload of task "p" no longer matches the schema of handler "h"/,
              )
            }),
          )
        }),
      ),
  )

  it.effect("the same inputs and clock moves give the same trace (jitter included)", () =>
    Effect.gen(function* () {
      const trace = () =>
        inStore((store) =>
          Effect.gen(function* () {
            const { seen, handler } = flaky()
            const start = yield* Clock.currentTimeMillis
            yield* withScheduler(store, { handlers: [handler], seed: 7, workers: 1 }, (d) =>
              Effect.gen(function* () {
                for (let k = 0; k < 5; k++) {
                  yield* d.schedule({
                    id: `t${k}`,
                    handler,
                    payload: { failUntil: k % 3 },
                    schedule: Schedule.fixedRate(50 + 10 * k),
                    retry: { maxRetries: 2, base: 20, jitter: "full" },
                  })
                }
                yield* advance(d, 500)
              }),
            )
            // Times relative to the start: the two traces run one after the other on one clock.
            const rel = (n: string) => String(Number(n) - start)
            return seen.map((x) =>
              x
                .replace(/:(\d+)#/, (_, n) => `:${rel(n)}#`)
                .replace(/@(\d+)$/, (_, n) => `@${rel(n)}`),
            )
          }),
        )
      const a = yield* trace()
      const b = yield* trace()
      expect(a.length).toBeGreaterThan(30)
      expect(a).toEqual(b)
    }),
  )

  it.effect(
    "runs cut off by a crash are due again when the store is reopened (at least once)",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const { seen, handler } = recording()
          // A process claims a run and dies before completing it: nothing but the claim is written.
          yield* Effect.gen(function* () {
            const s = yield* TaskStore.TaskStore
            yield* s.insert([
              {
                id: "cut",
                handler: "record",
                payload: '{"n":1}',
                schedule: { kind: "once", at: 5 },
                priority: 1,
                retry: Retry.none,
                missedRuns: "catch-up",
                pauseAfter: 0,
                timeoutMs: 0,
                slot: 5,
                seq: 1,
                now: 0,
              },
            ])
            const claimed = yield* s.claim({
              owner: "dead",
              now: 10,
              limit: 10,
              leaseMs: 60_000,
              handlers: ["record"],
            })
            expect(claimed.map((r) => [r.id, r.state, r.deliveries])).toEqual([
              ["cut", "running", 1],
            ])
          }).pipe(Effect.provide(store))
          yield* TestClock.adjust(15) // the process is down meanwhile
          yield* withScheduler(store, { handlers: [handler] }, (d) =>
            Effect.gen(function* () {
              yield* advance(d, 20)
              expect((yield* d.stats).recovered).toBe(1)
              const ledger = yield* d.ledger("cut")
              expect(
                ledger.map((o) => `${o.kind}${o.kind === "ran" ? `:delivery ${o.delivery}` : ""}`),
              ).toEqual(["recovered", "ran:delivery 2"])
            }),
          )
          expect(seen.map((s) => [s.id, s.slot, s.delivery, s.startedAt])).toEqual([
            ["cut", 5, 2, 15],
          ])
        }),
      ),
  )

  it.effect(
    "a run handed back by recovery is held when a pause was requested while it ran (SPEC §5.5)",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        try {
          const store = sqlite(t.file())
          const outcome = yield* Effect.gen(function* () {
            const s = yield* TaskStore.TaskStore
            const task = (id: string, seq: number) => ({
              id,
              handler: "record",
              payload: "{}",
              schedule: { kind: "fixed-rate", first: 5, period: 100 } as const,
              priority: 1,
              retry: Retry.none,
              missedRuns: "catch-up" as const,
              pauseAfter: 0,
              timeoutMs: 0,
              slot: 5,
              seq,
              now: 0,
            })
            yield* s.insert([task("asked", 1), task("plain", 2)])
            yield* s.claim({
              owner: "dead",
              now: 10,
              limit: 10,
              leaseMs: 60_000,
              handlers: ["record"],
            })
            // A pause asked for while the run is claimed: what `pause` writes on a running row.
            yield* s.modify("asked", (r) => ({
              update: Rows.requested(r, "manual", 12),
              events: [],
            }))
            expect(yield* s.recover(20)).toBe(2)
            const row = (id: string) =>
              s.get(id).pipe(Effect.map(Option.map((r) => [r.state, r.pausedReason, r.slot])))
            return [yield* row("asked"), yield* row("plain")]
          }).pipe(Effect.provide(store))
          expect(outcome).toEqual([
            Option.some(["paused", "manual", 5]),
            Option.some(["scheduled", null, 5]),
          ])
        } finally {
          t.cleanup()
        }
      }),
  )

  it.effect(
    "a task cancelled while it runs keeps its lease: the run finishes however long it takes",
    () =>
      inStore((store) =>
        Effect.gen(function* () {
          const { seen, handler } = slow()
          yield* withScheduler(store, { handlers: [handler], lease: 1_000 }, (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                id: "long",
                handler,
                payload: { ms: 4_000 },
                schedule: Schedule.once(0),
              })
              yield* advance(d, 100)
              expect(yield* d.cancel("long")).toBe(true)
              yield* advance(d, 5_000)
              const ledger = yield* d.ledger("long")
              expect(
                ledger.map((o) => (o.kind === "ran" ? `ran:${o.outcome}:${o.state}` : o.kind)),
              ).toEqual(["cancelled", "ran:succeeded:cancelled"])
              expect((yield* d.stats).fencedOut).toBe(0)
            }),
          )
          expect(seen).toEqual(["long@0-4000"])
        }),
      ),
  )

  it.effect("a stored row that cannot be read ends failed, saying why; the others run", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const store = sqlite(t.file())
      const { seen, handler } = recording()
      yield* withScheduler(store, { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({ id: "bad", handler, payload: { n: 1 }, schedule: Schedule.once(10) })
          yield* d.schedule({ id: "good", handler, payload: { n: 2 }, schedule: Schedule.once(10) })
        }),
      )
      // Edited by hand while no scheduler has the file open.
      const db = new Database(t.file())
      db.prepare(
        "UPDATE tickwork_tasks SET schedule = '{\"kind\":\"sometimes\"}' WHERE id = 'bad'",
      ).run()
      db.close()
      yield* withScheduler(store, { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* advance(d, 20)
          expect(yield* d.status("bad")).toBe("failed")
          const unreadable = yield* Effect.flip(d.info("bad"))
          expect(unreadable.message).toContain('the stored row of task "bad" cannot be read')
          expect(yield* d.status("good")).toBe("done")
        }),
      )
      expect(seen.map((s) => s.id)).toEqual(["good"])
      t.cleanup()
    }),
  )
})
