/**
 * SPEC §19.7 on stored rows: `retry(id, { slot })` runs one failed slot of a recurring task
 * again now — its ledger's last attempt + 1, a manual run — with the task's pending run set
 * aside and put back as it was; the decision is core's, on the row and the ledger's latest run
 * of the slot, in one transaction; refusals are typed and change nothing. SQLite on virtual
 * time (the scheduler, and StoreAdmin from another connection); PostgreSQL with two processes
 * claiming, where the retried slot runs once (real time, a condition waited on with a bound).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { Handler, Postgres, StoreAdmin } from "../src/index.ts"
import { advance, inFile, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/** A handler whose first attempt of each slot in `failing` fails; every run is recorded. */
const flaky = (failing: ReadonlySet<number> | "first") => {
  const runs: Array<[slot: number, attempt: number, manual: boolean]> = []
  const handler = Handler.make("sync", Schema.Struct({}), (_, run) =>
    Effect.suspend(() => {
      runs.push([run.slot, run.attempt, run.manual === true])
      const fails = failing === "first" ? runs.length === 1 : failing.has(run.slot)
      return fails && run.attempt === 1 ? Effect.fail("down") : Effect.void
    }),
  )
  return { runs, handler }
}

const pendingOf = (info: Option.Option<{ slot: number; scheduledFor: number; attempt: number }>) =>
  Option.map(info, (i) => ({ slot: i.slot, dueAt: i.scheduledFor, attempt: i.attempt }))

describe("retry of one slot on SQLite (SPEC §19.7)", () => {
  it.effect("runs the failed slot's next attempt now and puts the pending run back", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handler } = flaky(new Set([0]))
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 150)
            const before = pendingOf(yield* d.info("r"))
            expect(before).toEqual(Option.some({ slot: 200, dueAt: 200, attempt: 1 }))
            yield* d.retry("r", { slot: 0 })
            yield* advance(d, 0)
            expect(runs).toEqual([
              [0, 1, false],
              [100, 1, false],
              [0, 2, true],
            ])
            expect(pendingOf(yield* d.info("r"))).toEqual(before)
            const ledger = yield* d.ledger("r")
            const ran = ledger.flatMap((o) =>
              o.kind === "ran" ? [[o.slot, o.attempt, o.outcome]] : [],
            )
            expect(ran).toEqual([
              [0, 1, "failed"],
              [100, 1, "succeeded"],
              [0, 2, "succeeded"],
            ])
            const event = ledger.find((o) => o.kind === "manual-retry")
            expect(event).toMatchObject({ firstSlot: 0 })
            expect(event !== undefined && "detail" in event ? event.detail : "").toContain(
              "slot 0, attempt 2",
            )
            // Retried to success: refused now, with the slot and why; nothing changes.
            const again = yield* Effect.flip(d.retry("r", { slot: 0 }))
            expect(again).toMatchObject({ _tag: "ManualRunRefused", state: "scheduled", slot: 0 })
            expect(again.message).toContain("(attempt 2) succeeded")
            yield* advance(d, 50)
            expect(runs.map(([slot]) => slot)).toEqual([0, 100, 0, 200])
          }),
        )
      }),
    ),
  )

  it.effect("refusals are typed and change nothing; a bad slot is InvalidTime", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = flaky(new Set())
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(100) })
            yield* d.schedule({ id: "o", handler, payload: {}, schedule: Schedule.once(1_000) })
            yield* advance(d, 150)
            const info = yield* d.info("r")
            const ledger = (yield* d.ledger("r")).length
            const never = yield* Effect.flip(d.retry("r", { slot: 50 }))
            expect(never).toMatchObject({ _tag: "ManualRunRefused", slot: 50 })
            expect(never.message).toContain("its ledger has no run of slot 50")
            expect((yield* Effect.flip(d.retry("r", { slot: 100 }))).message).toContain("succeeded")
            expect(yield* Effect.flip(d.retry("r", { slot: 1.5 }))).toMatchObject({
              _tag: "InvalidTime",
              field: "slot",
              value: 1.5,
            })
            expect((yield* Effect.flip(d.retry("o", { slot: 1_000 }))).message).toContain(
              "a one-shot has one slot",
            )
            expect(yield* Effect.flip(d.retry("ghost", { slot: 0 }))).toMatchObject({
              state: "unknown",
            })
            yield* d.pause("r")
            expect(yield* Effect.flip(d.retry("r", { slot: 100 }))).toMatchObject({
              state: "paused",
            })
            yield* d.resume("r")
            expect(pendingOf(yield* d.info("r"))).toEqual(pendingOf(info))
            expect((yield* d.ledger("r")).filter((o) => o.kind === "manual-retry")).toEqual([])
            expect((yield* d.ledger("r")).filter((o) => o.kind === "ran")).toHaveLength(2)
            expect(ledger).toBeGreaterThan(0)
            // A trigger's run waiting (or already claimed and running) refuses it too.
            yield* d.trigger("r")
            expect((yield* Effect.flip(d.retry("r", { slot: 100 }))).message).toMatch(
              /already waiting|it is running/,
            )
          }),
        )
      }),
    ),
  )

  it.effect("StoreAdmin retries a slot from another connection, saying why when it does not", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, handler } = flaky(new Set([0]))
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(100) })
            yield* advance(d, 50)
          }),
        )
        const answers = yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file)
            const refused = yield* admin.retry("r", { slot: 50 })
            const bad = yield* Effect.flip(admin.retry("r", { slot: Number.NaN }))
            const done = yield* admin.retry("r", { slot: new Date(0), origin: "dashboard" })
            return { refused, bad, done }
          }),
        )
        expect(answers.refused).toMatchObject({ changed: false, state: "scheduled" })
        expect(answers.refused.refused).toContain("no run of slot 50")
        expect(answers.bad).toMatchObject({ _tag: "InvalidTime", field: "slot" })
        expect(answers.done).toMatchObject({ id: "r", changed: true, state: "scheduled" })
        expect(answers.done.refused).toBeUndefined()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            const event = (yield* d.ledger("r")).find((o) => o.kind === "manual-retry")
            expect(event).toMatchObject({ origin: "dashboard", firstSlot: 0 })
            expect(pendingOf(yield* d.info("r"))).toEqual(
              Option.some({ slot: 100, dueAt: 100, attempt: 1 }),
            )
          }),
        )
        expect(runs).toEqual([
          [0, 1, false],
          [0, 2, true],
        ])
      }),
    ),
  )
})

describe("retry of one slot on PostgreSQL, two processes claiming (SPEC §19.7)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a slot retried from StoreAdmin runs once in the fleet; the grid is put back", () =>
    Effect.gen(function* () {
      const { runs, handler } = flaky("first")
      const options = { handlers: [handler], pollInterval: 50 }
      const hour = 3_600_000
      const ran = (d: {
        ledger: (id: string) => Effect.Effect<ReadonlyArray<{ kind: string }>, unknown>
      }) => Effect.map(d.ledger("r"), (l) => l.filter((o) => o.kind === "ran").length)
      yield* withScheduler(Postgres.layer({ url: db.url }), options, (a) =>
        withScheduler(Postgres.layer({ url: db.url }), options, (b) =>
          Effect.gen(function* () {
            yield* a.schedule({ id: "r", handler, payload: {}, schedule: Schedule.fixedRate(hour) })
            const end = Date.now() + 20_000
            while ((yield* ran(a)) < 1 && Date.now() < end) yield* Effect.sleep(25)
            const before = pendingOf(yield* b.info("r"))
            const slot = (runs[0] as [number, number, boolean])[0]
            const r = yield* Effect.scoped(
              Effect.flatMap(StoreAdmin.open(db.url), (admin) => admin.retry("r", { slot })),
            )
            expect(r).toMatchObject({ changed: true })
            while ((yield* ran(a)) < 2 && Date.now() < end) yield* Effect.sleep(25)
            expect(pendingOf(yield* b.info("r"))).toEqual(before)
            expect(runs).toEqual([
              [slot, 1, false],
              [slot, 2, true],
            ])
          }),
        ),
      )
    }),
  )
})
