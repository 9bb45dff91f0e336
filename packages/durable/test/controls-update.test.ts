/**
 * SPEC §3, §15 on stored rows: tags and the `tasks` query, the bulk controls, a per-task
 * catch-up window, and `update` in place — each kept in the store and surviving a restart, on
 * SQLite (virtual time) and on PostgreSQL (real time, outcomes only, generous deadlines).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Handler, Postgres } from "../src/index.ts"
import { advance, inFile, recording, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

describe("tags, tasks(filter) and the bulk controls on SQLite, across a restart", () => {
  it.effect("tasks({ state, tag, kind, handler }) lists by filter, paged by id", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = recording()
        const other = recording("other").handler
        const options = { handlers: [handler, other] }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: { n: 1 } }
            yield* d.schedule({
              ...p,
              id: "a",
              schedule: Schedule.fixedRate(100),
              tags: ["billing"],
            })
            yield* d.schedule({
              ...p,
              id: "b",
              schedule: Schedule.once(500),
              tags: ["billing", "eu"],
            })
            yield* d.schedule({
              ...p,
              id: "c",
              schedule: Schedule.cron("0 * * * *"),
              tags: ["email"],
            })
            yield* d.schedule({
              handler: other,
              payload: { n: 2 },
              id: "d",
              schedule: Schedule.once(50),
            })
          }),
        )
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const ids = (filter: Parameters<typeof d.tasks>[0]) =>
              Effect.map(d.tasks(filter), (list) => list.map((t) => t.id))
            expect(yield* ids({ tag: "billing" })).toEqual(["a", "b"])
            expect(yield* ids({ tag: "eu" })).toEqual(["b"])
            expect(yield* ids({ kind: "once" })).toEqual(["b", "d"])
            expect(yield* ids({ kind: "cron", tag: "email" })).toEqual(["c"])
            expect(yield* ids({ handler: "other" })).toEqual(["d"])
            expect(yield* ids({ state: "paused" })).toEqual([])
            expect(yield* ids({ limit: 2 })).toEqual(["a", "b"])
            expect(yield* ids({ limit: 2, after: "b" })).toEqual(["c", "d"])
            const b = (yield* d.tasks({ tag: "eu" }))[0]
            expect([b?.tags, b?.kind]).toEqual([["billing", "eu"], "once"])
            // A reused id's new task does not carry its old task's tags.
            yield* d.cancel("d")
            yield* d.schedule({
              handler: other,
              payload: { n: 3 },
              id: "d",
              schedule: Schedule.once(9),
            })
            yield* d.update("d", { tags: ["eu"] })
            yield* d.cancel("d")
            yield* d.schedule({
              handler: other,
              payload: { n: 4 },
              id: "d",
              schedule: Schedule.once(9),
            })
            expect(yield* ids({ tag: "eu" })).toEqual(["b"])
            const bad = yield* Effect.flip(d.tasks({ limit: 0 }))
            expect([bad._tag, (bad as { field?: string }).field]).toEqual([
              "InvalidOption",
              "limit",
            ])
          }),
        )
      }),
    ),
  )

  it.effect(
    "pauseAll, resumeAll and cancelAll take the filter and return the ids they changed",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { seen, handler } = recording()
          const options = { handlers: [handler] }
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              const p = { handler, payload: { n: 1 } }
              yield* d.schedule({
                ...p,
                id: "a",
                schedule: Schedule.fixedRate(100),
                tags: ["billing"],
              })
              yield* d.schedule({ ...p, id: "b", schedule: Schedule.once(250), tags: ["billing"] })
              yield* d.schedule({
                ...p,
                id: "c",
                schedule: Schedule.fixedRate(100),
                tags: ["email"],
              })
              yield* advance(d, 50)
              expect(yield* d.pauseAll({ tag: "billing" })).toEqual(["a", "b"])
              // Already paused: nothing changes the second time.
              expect(yield* d.pauseAll({ tag: "billing" })).toEqual([])
            }),
          )
          yield* TestClock.adjust(300)
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              expect(yield* d.status("a")).toBe("paused")
              expect((yield* d.tasks({ state: "paused" })).map((t) => t.id)).toEqual(["a", "b"])
              expect(yield* d.resumeAll({ tag: "billing", kind: "fixed-rate" })).toEqual(["a"])
              expect(yield* d.cancelAll({ state: "paused" })).toEqual(["b"])
              expect(yield* d.cancelAll({ tag: "email" })).toEqual(["c"])
              yield* advance(d, 100)
              expect(yield* d.status("b")).toBe("cancelled")
            }),
          )
          // a ran at 0, was paused from 50 to 350, then runs from its first slot >= 350; b never.
          expect(seen.filter((s) => s.id === "a").map((s) => s.startedAt)).toEqual([0, 400])
          expect(seen.filter((s) => s.id === "b")).toEqual([])
        }),
      ),
  )
})

describe("a per-task catch-up window on SQLite, across a restart", () => {
  it.effect("a grid task's own window skips the slots older than it (cause window)", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        // No layer-wide window: only the task's own applies.
        const options = { handlers: [handler], catchUpWindow: false as const, workers: 1 }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "w",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
              window: 150,
            })
            yield* d.schedule({
              id: "x",
              handler,
              payload: { n: 2 },
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 50)
            expect(Option.getOrThrow(yield* d.info("w")).window).toBe(150)
          }),
        )
        yield* TestClock.adjust(950) // down until 1000
        const ledger = yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            return yield* d.ledger("w")
          }),
        )
        // Down from 50 to 1000: slots 100…800 are more than 150 ms late and skipped; 900 and
        // 1000 run (catch-up). The task without a window catches every slot up.
        expect(seen.filter((s) => s.id === "w").map((s) => s.slot)).toEqual([0, 900, 1000])
        expect(seen.filter((s) => s.id === "x").map((s) => s.slot)).toEqual([
          0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000,
        ])
        expect(
          ledger.flatMap((o) =>
            o.kind === "skipped" ? [[o.firstSlot, o.lastSlot, o.count, o.cause]] : [],
          ),
        ).toEqual([[100, 800, 8, "window"]])
      }),
    ),
  )

  it.effect("a one-shot's window is a deadline: past it, the run expires and the task fails", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const options = { handlers: [handler] }
        yield* withScheduler(sqlite(file), options, (d) =>
          d.schedule({
            id: "o",
            handler,
            payload: { n: 1 },
            schedule: Schedule.once(100),
            window: 50,
          }),
        )
        yield* TestClock.adjust(200) // down past 100 + 50
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            expect(yield* d.status("o")).toBe("failed")
            const events = (yield* d.ledger("o")).filter((o) => o.kind !== "ran")
            expect(events.map((o) => [o.kind, o.firstSlot])).toEqual([["expired", 100]])
            expect(Option.getOrThrow(yield* d.info("o")).lastError).toContain("deadline 150")
          }),
        )
        expect(seen).toEqual([])
      }),
    ),
  )
})

describe("update in place on SQLite, across a restart", () => {
  it.effect("a new schedule starts as if scheduled now; id, generation and run count stay", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const options = { handlers: [handler] }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "u",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 150)
            const before = Option.getOrThrow(yield* d.info("u"))
            expect(
              yield* d.update("u", {
                schedule: Schedule.fixedRate(50, { delay: 20 }),
                priority: "high",
                tags: ["moved"],
                payload: { n: 2 },
              }),
            ).toBe(true)
            const after = Option.getOrThrow(yield* d.info("u"))
            expect([after.id, after.generation, after.runNumber]).toEqual([
              before.id,
              before.generation,
              before.runNumber,
            ])
            expect([after.scheduledFor, after.priority, after.tags, after.payload]).toEqual([
              170,
              "high",
              ["moved"],
              { n: 2 },
            ])
            expect((yield* d.tasks({ tag: "moved" })).map((t) => t.id)).toEqual(["u"])
          }),
        )
        yield* withScheduler(sqlite(file), options, (d) => advance(d, 100))
        // Runs at 0 and 100 on the old schedule; then 170, 220 on the new grid (kept by the store).
        expect(seen.map((s) => `${s.slot}:${(s.payload as { n: number }).n}`)).toEqual([
          "0:1",
          "100:1",
          "170:2",
          "220:2",
        ])
      }),
    ),
  )

  it.effect("a running task takes a new schedule when its run ends, as if scheduled then", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const started: Array<number> = []
        const handler = Handler.make("slow", Schema.Struct({}), (_, run) =>
          Effect.andThen(
            Effect.sync(() => started.push(run.startedAt)),
            Effect.sleep(50),
          ),
        )
        const options = { handlers: [handler] }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(100) })
            yield* advance(d, 10)
            expect(yield* d.status("r")).toBe("running")
            expect(
              yield* d.update("r", {
                schedule: Schedule.fixedRate(1_000, { delay: 500 }),
                retry: { maxRetries: 2 },
              }),
            ).toBe(true)
            // Still the old grid while it runs: its run's slot goes on.
            expect(Option.getOrThrow(yield* d.info("r")).schedule).toEqual({
              kind: "fixed-rate",
              first: 0,
              period: 100,
            })
            yield* advance(d, 100)
            // The run ended at 50: the new schedule's first slot is 50 + 500.
            const info = Option.getOrThrow(yield* d.info("r"))
            expect([info.state, info.scheduledFor, info.runNumber]).toEqual(["scheduled", 550, 1])
            expect(info.schedule).toEqual({ kind: "fixed-rate", first: 550, period: 1_000 })
          }),
        )
        yield* withScheduler(sqlite(file), options, (d) => advance(d, 1_500))
        expect(started).toEqual([0, 550, 1_550])
      }),
    ),
  )

  it.effect("a retry policy changed while a run goes on decides that run's failure", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const runs: Array<string> = []
        const handler = Handler.make("once-flaky", Schema.Struct({}), (_, run) =>
          Effect.andThen(
            Effect.sync(() => runs.push(`${run.attempt}@${run.startedAt}`)),
            Effect.andThen(Effect.sleep(50), run.attempt === 1 ? Effect.fail("x") : Effect.void),
          ),
        )
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "t", handler, payload: {}, schedule: Schedule.once(0) })
            yield* advance(d, 10)
            expect(yield* d.update("t", { retry: { maxRetries: 1, base: 5 } })).toBe(true)
            yield* advance(d, 200)
            expect(yield* d.status("t")).toBe("done")
          }),
        )
        // Failed at 50 with a retry now allowed: due 5 ms later.
        expect(runs).toEqual(["1@0", "2@55"])
      }),
    ),
  )

  it.effect("a bad change is a typed error naming the field and value, and changes nothing", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = recording()
        // Nothing claims (`claim: false`): the row changes only by what the test does. With
        // claims on, the task (due at once) was claimed whenever the test's fiber happened to
        // yield to the dispatcher's, which depended on how many steps each update took.
        const options = { handlers: [handler], claim: false }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "e",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
            })
            const before = yield* d.info("e")
            const cases = [
              [{ priority: "urgent" }, "InvalidPriority", "priority"],
              [{ retry: { maxRetries: -1 } }, "InvalidRetryPolicy", "retry.maxRetries"],
              [{ missedRuns: "later" }, "InvalidOption", "missedRuns"],
              [{ window: -1 }, "InvalidOption", "window"],
              [{ timeout: 0.5 }, "InvalidOption", "timeout"],
              [{ tags: [""] }, "InvalidOption", "tags[0]"],
              [{ breaker: "nope" }, "InvalidOption", "breaker"],
              [{ breaker: { failures: 1, coolDown: -3 } }, "InvalidOption", "breaker.coolDown"],
              [{ schedule: Schedule.fixedRate(0) }, "InvalidPeriod", "period"],
              [{ schedule: Schedule.custom(() => undefined) }, "NotDurable", "schedule"],
              [{ schedule: Schedule.fixedDelay(10), window: 5 }, "InvalidOption", "window"],
              [{ payload: { n: "x" } }, "InvalidPayload", "payload.n"],
              [{ missedRun: "skip" }, "InvalidOption", "missedRun"],
              [{ id: "z" }, "InvalidOption", "id"],
            ] as const
            for (const [changes, tag, field] of cases) {
              const e = yield* Effect.flip(d.update("e", changes as never))
              expect({ tag: e._tag, field: (e as { field?: string }).field }).toEqual({
                tag,
                field,
              })
              expect(e.message).toContain(field.split(".")[0])
            }
            expect(yield* d.info("e")).toEqual(before)
            expect(yield* d.update("nobody", { priority: "low" })).toBe(false)
            yield* d.cancel("e")
            expect(yield* d.update("e", { priority: "low" })).toBe(false)
          }),
        )
      }),
    ),
  )
})

describe("controls on PostgreSQL, across a restart", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("tags, an update and pauseAll are kept for the next process", () =>
    Effect.gen(function* () {
      const { handler } = recording()
      const options = { handlers: [handler], pollInterval: 50 }
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (d) =>
        Effect.gen(function* () {
          const p = { handler, payload: { n: 1 } }
          yield* d.schedule({ ...p, id: "a", schedule: Schedule.once(60_000), tags: ["x"] })
          yield* d.schedule({
            ...p,
            id: "b",
            schedule: Schedule.fixedRate(60_000, { delay: 60_000 }),
          })
          expect(yield* d.update("b", { tags: ["x", "y"], window: "5 minutes" })).toBe(true)
          expect(yield* d.pauseAll({ tag: "x" })).toEqual(["a", "b"])
        }),
      )
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (d) =>
        Effect.gen(function* () {
          expect((yield* d.tasks({ tag: "y" })).map((t) => [t.id, t.state, t.window])).toEqual([
            ["b", "paused", 300_000],
          ])
          expect(yield* d.resumeAll({ kind: "once" })).toEqual(["a"])
          expect(yield* d.cancelAll({ tag: "x" })).toEqual(["a", "b"])
        }),
      )
    }),
  )
})
