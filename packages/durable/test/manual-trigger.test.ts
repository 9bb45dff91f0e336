/**
 * SPEC §19.1 and §19.6 on stored rows: a durable `trigger` sets the pending run aside, runs a
 * manual run now, and puts the pending run back exactly as it was (slot, attempt, due time) —
 * the grid unchanged after it, whatever its outcome; refusals are typed and change nothing; the
 * stored column survives a restart. SQLite on virtual time; PostgreSQL with two processes
 * claiming, where the manual run happens once (real time, a condition waited on with a bound).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Metrics } from "@tickwork/runtime"
import { Effect, Metric, Option, Schema } from "effect"
import { Handler, Postgres, StoreAdmin } from "../src/index.ts"
import { advance, inFile, settle, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/** A handler that fails while `gate.fail` is set, recording every run it is given. */
const gated = () => {
  const gate = { fail: false }
  const runs: Array<[slot: number, attempt: number]> = []
  const manual: Array<boolean | undefined> = []
  const handler = Handler.make("report", Schema.Struct({}), (_, run) =>
    Effect.suspend(() => {
      runs.push([run.slot, run.attempt])
      manual.push(run.manual)
      return gate.fail ? Effect.fail("declined") : Effect.void
    }),
  )
  return { gate, runs, manual, handler }
}

/** The stored pending run: what a trigger must leave as it found it. */
const pendingOf = (info: Option.Option<{ slot: number; scheduledFor: number; attempt: number }>) =>
  Option.map(info, (i) => ({ slot: i.slot, dueAt: i.scheduledFor, attempt: i.attempt }))

describe("trigger on SQLite (SPEC §19.1)", () => {
  it.effect("runs a recurring task now and leaves its grid as it was, even when it fails", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { gate, runs, manual, handler } = gated()
        yield* withScheduler(sqlite(file), { handlers: [handler], runtime: { name: "t" } }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
              retry: { maxRetries: 3, base: 5 },
              pauseAfterConsecutiveFailures: 1,
            })
            yield* advance(d, 30)
            const before = pendingOf(yield* d.info("r"))
            expect(before).toEqual(Option.some({ slot: 100, dueAt: 100, attempt: 1 }))
            gate.fail = true
            yield* d.trigger("r")
            yield* advance(d, 0)
            // Failed, yet no retry and no pause (the failure policy never sees it).
            const after = yield* d.info("r")
            expect(pendingOf(after)).toEqual(before)
            expect(after).toMatchObject(
              Option.some({ state: "scheduled", consecutiveFailures: 0, lastError: '"declined"' }),
            )
            gate.fail = false
            yield* advance(d, 70)
            expect(runs).toEqual([
              [0, 1],
              [30, 1],
              [100, 1],
            ])
            const ledger = yield* d.ledger("r")
            const ran = ledger.flatMap((o) => (o.kind === "ran" ? [[o.slot, o.outcome]] : []))
            expect(ran).toEqual([
              [0, "succeeded"],
              [30, "failed"],
              [100, "succeeded"],
            ])
            expect(ledger.filter((o) => o.kind === "manual-trigger")).toHaveLength(1)
          }),
        )
        // The handler is told which run was manual; its lateness is not counted.
        expect(manual).toEqual([undefined, true, undefined])
        const m = Metrics.forScheduler("t", "report")
        expect((yield* Metric.value(m.runs.failed)).count).toBe(1)
        expect((yield* Metric.value(m.lateness)).count).toBe(2)
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
    ),
  )

  it.effect("keeps a pending retry's attempt and due time", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { gate, runs, handler } = gated()
        gate.fail = true
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(1_000),
              retry: { maxRetries: 3, base: 50 },
            })
            yield* advance(d, 10)
            const before = pendingOf(yield* d.info("r"))
            expect(before).toEqual(Option.some({ slot: 0, dueAt: 50, attempt: 2 }))
            gate.fail = false
            yield* d.trigger("r")
            yield* advance(d, 0)
            expect(pendingOf(yield* d.info("r"))).toEqual(before)
            yield* advance(d, 40)
            expect(runs).toEqual([
              [0, 1],
              [10, 1],
              [0, 2],
            ])
          }),
        )
      }),
    ),
  )

  it.effect("refusals are typed and change nothing", () =>
    inFile((file) =>
      Effect.gen(function* () {
        // A run that takes 50 virtual ms: the manual run is `running` until the clock moves.
        const slow = Handler.make("slow", Schema.Struct({}), () => Effect.sleep(50))
        yield* withScheduler(sqlite(file), { handlers: [slow] }, (d) =>
          Effect.gen(function* () {
            const every = Schedule.fixedRate(1_000, { delay: 1_000 })
            yield* d.schedule({ id: "r", handler: slow, payload: {}, schedule: every })
            yield* d.schedule({ id: "p", handler: slow, payload: {}, schedule: every })
            yield* d.pause("p")
            yield* d.trigger("r")
            yield* settle(d)
            expect(yield* d.status("r")).toBe("running")
            const during = yield* d.info("r")
            const ledger = (yield* d.ledger("r")).length
            expect(yield* Effect.flip(d.trigger("r"))).toMatchObject({
              _tag: "ManualRunRefused",
              action: "trigger",
              id: "r",
              state: "running",
            })
            expect(yield* Effect.flip(d.trigger("p"))).toMatchObject({ state: "paused" })
            expect(yield* Effect.flip(d.trigger("ghost"))).toMatchObject({ state: "unknown" })
            expect(yield* d.info("r")).toEqual(during)
            expect((yield* d.ledger("r")).length).toBe(ledger)
            yield* advance(d, 50)
            expect(pendingOf(yield* d.info("r"))).toEqual(
              Option.some({ slot: 1_000, dueAt: 1_000, attempt: 1 }),
            )
          }),
        )
      }),
    ),
  )

  it.effect("a pause or a new schedule before the manual run starts drops it", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handler } = gated()
        yield* withScheduler(sqlite(file), { handlers: [handler], claim: false }, (d) =>
          Effect.gen(function* () {
            const every = Schedule.fixedRate(100, { delay: 100 })
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: every })
            const grid = pendingOf(yield* d.info("r"))
            yield* d.trigger("r")
            expect(pendingOf(yield* d.info("r"))).not.toEqual(grid)
            yield* d.pause("r")
            expect(pendingOf(yield* d.info("r"))).toEqual(grid)
            yield* d.resume("r")
            expect(pendingOf(yield* d.info("r"))).toEqual(grid)
            // Dropped, not waiting: a trigger is taken again; then a new schedule drops it.
            yield* d.trigger("r")
            yield* d.update("r", { schedule: Schedule.fixedRate(500, { delay: 500 }) })
            expect(pendingOf(yield* d.info("r"))).toEqual(
              Option.some({ slot: 500, dueAt: 500, attempt: 1 }),
            )
            yield* d.trigger("r")
          }),
        )
        expect(runs).toEqual([])
      }),
    ),
  )

  it.effect("a pause asked for while the manual run runs holds the kept run when it ends", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const slow = Handler.make("slow", Schema.Struct({}), () => Effect.sleep(50))
        yield* withScheduler(sqlite(file), { handlers: [slow] }, (d) =>
          Effect.gen(function* () {
            const every = Schedule.fixedRate(1_000, { delay: 1_000 })
            yield* d.schedule({ id: "r", handler: slow, payload: {}, schedule: every })
            const grid = pendingOf(yield* d.info("r"))
            yield* d.trigger("r")
            yield* settle(d)
            expect(yield* d.status("r")).toBe("running")
            expect(yield* d.pause("r")).toBe(true)
            yield* advance(d, 50)
            const held = yield* d.info("r")
            expect(held).toMatchObject(Option.some({ state: "paused", pausedReason: "manual" }))
            expect(pendingOf(held)).toEqual(grid)
            yield* d.resume("r")
            expect(pendingOf(yield* d.info("r"))).toEqual(grid)
          }),
        )
      }),
    ),
  )

  it.effect("StoreAdmin triggers from another connection; the kept run survives a restart", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handler } = gated()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(100) })
            yield* advance(d, 0)
          }),
        )
        const answers = yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file)
            const done = yield* admin.trigger("r", { origin: "cli" })
            const again = yield* admin.trigger("r")
            return { done, again }
          }),
        )
        expect(answers.done).toMatchObject({ id: "r", changed: true, state: "scheduled" })
        expect(answers.again).toMatchObject({ changed: false, state: "scheduled" })
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            expect(pendingOf(yield* d.info("r"))).toEqual(
              Option.some({ slot: 100, dueAt: 100, attempt: 1 }),
            )
            const event = (yield* d.ledger("r")).find((o) => o.kind === "manual-trigger")
            expect(event).toMatchObject({ origin: "cli" })
          }),
        )
        expect(runs.length).toBe(2)
        expect(runs[0]).toEqual([0, 1])
      }),
    ),
  )
})

describe("trigger on PostgreSQL, two processes claiming (SPEC §19.6)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a trigger from StoreAdmin runs once in the fleet and the grid is put back", () =>
    Effect.gen(function* () {
      const { runs, handler } = gated()
      const options = { handlers: [handler], pollInterval: 50 }
      const hour = 3_600_000
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (a) =>
        withScheduler(Postgres.layer({ url: db.url }), options, (b) =>
          Effect.gen(function* () {
            yield* a.schedule({
              id: "r",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(hour, { delay: hour }),
            })
            const before = pendingOf(yield* b.info("r"))
            const r = yield* Effect.scoped(
              Effect.flatMap(StoreAdmin.open(db.url), (admin) => admin.trigger("r")),
            )
            expect(r).toMatchObject({ changed: true })
            // The manual run is recorded once its completion committed: the row is back then.
            const end = Date.now() + 20_000
            while (!(yield* a.ledger("r")).some((o) => o.kind === "ran") && Date.now() < end)
              yield* Effect.sleep(25)
            expect(pendingOf(yield* b.info("r"))).toEqual(before)
            expect(yield* b.status("r")).toBe("scheduled")
            // Nothing is due before the kept slot, an hour away: no process can run it again.
            expect(runs).toHaveLength(1)
            expect(Option.map(before, (p) => p.attempt)).toEqual(Option.some(1))
          }),
        ),
      )
    }),
  )
})
