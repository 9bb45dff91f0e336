/**
 * SPEC §5, §7, §15 on stored rows: pause and resume (by hand, and after the failure policy
 * paused a task) are kept in the store and survive a restart, on SQLite (virtual time) and on
 * PostgreSQL (real time, outcomes only, generous deadlines).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Handler, Postgres } from "../src/index.ts"
import { advance, inFile, recording, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

describe("pause and resume on SQLite, across a restart", () => {
  it.effect("a paused grid task runs nothing until resumed, then its first slot >= now", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const store = sqlite(file)
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 150)
            expect(yield* d.pause("r")).toBe(true)
            expect(yield* d.pause("r")).toBe(false)
            expect(yield* d.status("r")).toBe("paused")
          }),
        )
        yield* TestClock.adjust(300)
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 200)
            expect(yield* d.status("r")).toBe("paused")
            const info = yield* d.info("r")
            expect(Option.getOrThrow(info).pausedReason).toBe("manual")
            expect(yield* d.resume("r")).toBe(true)
            expect(yield* d.resume("r")).toBe(false)
            yield* advance(d, 100)
            const ledger = yield* d.ledger("r")
            expect(
              ledger
                .filter((o) => o.kind !== "ran")
                .map((o) => [o.kind, o.firstSlot, o.lastSlot, o.count, o.cause]),
            ).toEqual([
              ["paused", 200, 200, 1, "manual"],
              ["skipped", 200, 600, 5, "paused"],
              ["resumed", 700, 700, 1, "manual"],
            ])
          }),
        )
        expect(seen.map((s) => s.startedAt)).toEqual([0, 100, 700])
      }),
    ),
  )

  it.effect("SPEC §7: a task paused by its failure policy stays paused until resumed", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const runs: Array<number> = []
        let failing = true
        const handler = Handler.make("f", Schema.Struct({}), (_, run) =>
          Effect.suspend(() => {
            runs.push(run.startedAt)
            return failing ? Effect.fail("boom") : Effect.void
          }),
        )
        const store = sqlite(file)
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "f",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
              pauseAfterConsecutiveFailures: 2,
            })
            yield* advance(d, 500)
          }),
        )
        expect(runs).toEqual([0, 100])
        failing = false
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            expect(yield* d.status("f")).toBe("paused")
            expect(Option.getOrThrow(yield* d.info("f")).pausedReason).toBe("failures")
            // Issue 24: as in the kernel, a pause by hand outranks the failure policy's.
            expect(yield* d.pause("f")).toBe(false)
            expect(Option.getOrThrow(yield* d.info("f")).pausedReason).toBe("manual")
            expect(yield* d.resume("f")).toBe(true)
            yield* advance(d, 200)
            expect(yield* d.status("f")).toBe("scheduled")
            expect(Option.getOrThrow(yield* d.info("f")).consecutiveFailures).toBe(0)
          }),
        )
        expect(runs).toEqual([0, 100, 500, 600, 700])
      }),
    ),
  )

  it.effect(
    "pause, the slots it skipped and resume reach the occurrence stream as well as the ledger",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { handler } = recording()
          const published: Array<string> = []
          yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
            Effect.gen(function* () {
              yield* Effect.forkChild(
                Stream.runForEach(d.occurrences, (o) =>
                  Effect.sync(() => {
                    if (o.kind !== "ran") published.push(`${o.kind} ${o.taskId}`)
                  }),
                ),
                { startImmediately: true },
              )
              yield* d.schedule({
                id: "r",
                handler,
                payload: { n: 1 },
                schedule: Schedule.fixedRate(100),
              })
              yield* advance(d, 50)
              expect(yield* d.pause("r")).toBe(true)
              yield* advance(d, 200)
              expect(yield* d.resume("r")).toBe(true)
              yield* advance(d, 10)
              const ledger = (yield* d.ledger("r")).filter((o) => o.kind !== "ran")
              expect(published).toEqual(ledger.map((o) => `${o.kind} ${o.taskId}`))
              expect(published).toEqual(["paused r", "skipped r", "resumed r"])
            }),
          )
        }),
      ),
  )

  it.effect("a pause asked for while a run goes on holds the next slot when it ends", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const started: Array<number> = []
        const handler = Handler.make("slow", Schema.Struct({}), (_, run) =>
          Effect.andThen(
            Effect.sync(() => started.push(run.startedAt)),
            Effect.sleep(50),
          ),
        )
        const published: Array<string> = []
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* Effect.forkChild(
              Stream.runForEach(d.occurrences, (o) =>
                Effect.sync(() => {
                  if (o.kind === "ran") published.push(o.state)
                }),
              ),
              { startImmediately: true },
            )
            yield* d.schedule({
              id: "s",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 10)
            expect(yield* d.status("s")).toBe("running")
            expect(yield* d.pause("s")).toBe(true)
            yield* advance(d, 300)
            expect(yield* d.status("s")).toBe("paused")
            // The run's record says what its row became: paused, holding slot 100.
            expect(published).toEqual(["paused"])
            expect(Option.getOrThrow(yield* d.info("s")).scheduledFor).toBe(100)
          }),
        )
        expect(started).toEqual([0])
      }),
    ),
  )
  it.effect("a held retry resumes first; the grid then goes on after the skipped slots", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const runs: Array<string> = []
        const handler = Handler.make("h", Schema.Struct({}), (_, run) =>
          Effect.andThen(
            Effect.sync(() => runs.push(`${run.slot}#${run.attempt}@${run.startedAt}`)),
            Effect.andThen(
              Effect.sleep(10),
              run.attempt === 1 && run.slot === 0 ? Effect.fail("x") : Effect.void,
            ),
          ),
        )
        const store = sqlite(file)
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "h",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
              retry: { maxRetries: 1, base: 50 },
            })
            yield* advance(d, 5)
            expect(yield* d.pause("h")).toBe(true)
            yield* advance(d, 100)
            expect(yield* d.status("h")).toBe("paused")
            const held = Option.getOrThrow(yield* d.info("h"))
            expect([held.slot, held.attempt, held.scheduledFor]).toEqual([0, 2, 60])
          }),
        )
        yield* TestClock.adjust(300)
        yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            expect(yield* d.resume("h")).toBe(true)
            // Closing waits for runs in flight: stop between runs (600 ends at 610).
            yield* advance(d, 245)
            const skipped = (yield* d.ledger("h")).flatMap((o) =>
              o.kind === "skipped" ? [[o.firstSlot, o.lastSlot, o.count]] : [],
            )
            expect(skipped).toEqual([[100, 400, 4]])
          }),
        )
        expect(runs).toEqual(["0#1@0", "0#2@405", "500#1@500", "600#1@600"])
      }),
    ),
  )
})

describe("pause and resume on PostgreSQL, across a restart", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a paused task is not run by a new process until it is resumed", () =>
    Effect.gen(function* () {
      const { seen, handler } = recording()
      const options = { handlers: [handler], pollInterval: 50 }
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({ id: "p", handler, payload: { n: 1 }, schedule: Schedule.once(300) })
          expect(yield* d.pause("p")).toBe(true)
        }),
      )
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (d) =>
        Effect.gen(function* () {
          yield* Effect.sleep(800)
          expect(yield* d.status("p")).toBe("paused")
          expect(seen).toEqual([])
          expect(yield* d.resume("p")).toBe(true)
          const end = Date.now() + 20_000
          while ((yield* d.status("p")) !== "done" && Date.now() < end) yield* Effect.sleep(50)
          expect(yield* d.status("p")).toBe("done")
        }),
      )
      expect(seen.map((s) => s.id)).toEqual(["p"])
    }),
  )
})
