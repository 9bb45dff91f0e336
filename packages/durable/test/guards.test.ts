/**
 * Rules of the durable scheduler that no other test guarded (issue 29): each test here fails
 * when its rule is broken. SQLite in virtual time, except the claim's own-lock check, which is
 * PostgreSQL's (only there do several processes claim at once).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Retry, Schedule } from "@tickwork/core"
import { Effect, Exit, Layer, Option, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, Postgres, TaskStore } from "../src/index.ts"
import { advance, inFile, recording, sqlite, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

const HOUR = 3_600_000

/** A stored one-shot of the `record` handler, due at `slot`. */
const oneShot = (id: string, slot: number, windowMs?: number): TaskStore.NewTask => ({
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
  ...(windowMs === undefined ? {} : { windowMs }),
})

describe("the layer's defaults", () => {
  it.effect("with no catchUpWindow, slots more than a day late are skipped, later ones run", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { seen, handler } = recording()
        const options = { handlers: [handler], workers: 1 }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "hourly",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(HOUR),
            })
            yield* advance(d, 0)
          }),
        )
        // Down until 30.5 h: the slots at 1 h … 6 h are more than a day late, 7 h … 30 h not.
        yield* TestClock.adjust(30.5 * HOUR)
        const ledger = yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            return yield* d.ledger("hourly")
          }),
        )
        expect(
          ledger.flatMap((o) =>
            o.kind === "skipped" ? [[o.firstSlot, o.lastSlot, o.count, o.cause]] : [],
          ),
        ).toEqual([[HOUR, 6 * HOUR, 6, "window"]])
        expect(seen.map((s) => s.slot / HOUR)).toEqual([
          0,
          ...Array.from({ length: 24 }, (_, k) => 7 + k),
        ])
      }),
    ),
  )
})

describe("update", () => {
  it.effect("an update that does not name window keeps the task's own window", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = recording()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "w",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
              window: 150,
            })
            expect(yield* d.update("w", { priority: "high" })).toBe(true)
            const info = Option.getOrThrow(yield* d.info("w"))
            expect([info.priority, info.window]).toEqual(["high", 150])
          }),
        )
      }),
    ),
  )
})

describe("bulk controls", () => {
  it.effect("walk every match, past the first page of 500", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = recording()
        const n = 510
        yield* withScheduler(sqlite(file), { handlers: [handler], claim: false }, (d) =>
          Effect.gen(function* () {
            yield* d.scheduleAll(
              Array.from({ length: n }, (_, k) => ({
                id: `t${String(k).padStart(4, "0")}`,
                handler,
                payload: { n: k },
                schedule: Schedule.once(HOUR),
                tags: ["bulk"],
              })),
            )
            expect(yield* d.pauseAll({ tag: "bulk" })).toHaveLength(n)
            expect((yield* d.stats).tasks.paused).toBe(n)
            expect(yield* d.resumeAll({ tag: "bulk" })).toHaveLength(n)
            expect((yield* d.stats).tasks.scheduled).toBe(n)
            expect(yield* d.cancelAll({ tag: "bulk" })).toHaveLength(n)
            expect((yield* d.stats).tasks.cancelled).toBe(n)
          }),
        )
      }),
    ),
  )
})

describe("circuit breakers", () => {
  it.effect("held tasks due at the same time and of one priority: the lowest id probes", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const runs: Array<string> = []
        const handler = Handler.make("mail", Schema.Struct({}), (_, run) =>
          Effect.suspend(() => {
            runs.push(`${run.id}@${run.startedAt}`)
            return run.id === "trigger" ? Effect.fail("smtp down") : Effect.void
          }),
        )
        const options = {
          handlers: [handler],
          workers: 1,
          breakers: { smtp: { failures: 1, coolDown: 100 } },
        }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: {}, breaker: "smtp" }
            yield* d.schedule({ ...p, id: "trigger", schedule: Schedule.once(0) })
            // Stored "b" first, so neither insertion order nor rowid picks "a".
            yield* d.schedule({ ...p, id: "b", schedule: Schedule.once(50) })
            yield* d.schedule({ ...p, id: "a", schedule: Schedule.once(50) })
            yield* advance(d, 50)
            const open = Option.getOrThrow(yield* d.breaker("smtp"))
            expect([open.state, open.held]).toEqual(["open", ["a", "b"]])
            // 100: half-open; a and b would both run at 50 with one priority: ties go by id.
            yield* advance(d, 50)
            const halfOpen = (yield* Effect.forEach(["a", "b"], d.ledger))
              .flat()
              .flatMap((o) =>
                o.kind === "breaker" && o.cause === "half-open" ? [`${o.taskId}@${o.at}`] : [],
              )
            expect(halfOpen).toEqual(["a@100"])
            expect(runs.slice(0, 2)).toEqual(["trigger@0", "a@100"])
          }),
        )
      }),
    ),
  )
})

describe("a re-delivered run", () => {
  it.effect("is not decided again at its claim: past its window it runs, not expires", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const store = sqlite(file)
        const { seen, handler } = recording()
        // A process claims a one-shot on time (due 5, window 100) and dies before completing.
        yield* Effect.gen(function* () {
          const s = yield* TaskStore.TaskStore
          yield* s.insert([oneShot("cut", 5, 100)])
          const claimed = yield* s.claim({
            owner: "dead",
            now: 10,
            limit: 10,
            leaseMs: 60_000,
            handlers: ["record"],
          })
          expect(claimed.map((r) => [r.id, r.deliveries])).toEqual([["cut", 1]])
        }).pipe(Effect.provide(store))
        // Reopened long past the window: its deadline was met at the first delivery.
        yield* TestClock.adjust(10_000)
        const ledger = yield* withScheduler(store, { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* advance(d, 0)
            return yield* d.ledger("cut")
          }),
        )
        expect(
          ledger.map((o) => `${o.kind}${o.kind === "ran" ? `:delivery ${o.delivery}` : ""}`),
        ).toEqual(["recovered", "ran:delivery 2"])
        expect(seen.map((s) => [s.id, s.delivery, s.startedAt])).toEqual([["cut", 2, 10_000]])
      }),
    ),
  )
})

describe("stats and the shutdown report", () => {
  it.effect("count released runs as released, not also as completed", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const handler = Handler.make("hang", Schema.Struct({ hang: Schema.Boolean }), (p) =>
          p.hang ? Effect.never : Effect.void,
        )
        const reports: Array<DurableScheduler.DurableShutdownReport> = []
        const scope = yield* Scope.make()
        // The store is built in the same scope first, so it closes after the scheduler.
        const store = yield* Layer.buildWithScope(sqlite(file), scope)
        const d = yield* DurableScheduler.make({
          handlers: [handler],
          workers: 3,
          shutdown: "interrupt",
          onShutdown: (r) => reports.push(r),
        }).pipe(
          Effect.map((made) => made.durable),
          Scope.provide(scope),
          Effect.provideContext(store),
        )
        yield* d.schedule({
          id: "quick",
          handler,
          payload: { hang: false },
          schedule: Schedule.once(0),
        })
        for (const id of ["h1", "h2"]) {
          yield* d.schedule({ id, handler, payload: { hang: true }, schedule: Schedule.once(0) })
        }
        yield* advance(d, 10)
        const before = yield* d.stats
        expect([before.completed, before.released, before.inFlight]).toEqual([1, 0, 2])
        yield* Scope.close(scope, Exit.void)
        expect(reports).toHaveLength(1)
        expect(reports[0]).toMatchObject({ completed: 0, released: 2 })
      }),
    ),
  )
})

describe("the claim's own-lock check (PostgreSQL)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("a claim made without holding the session's lock claims nothing", () =>
    Effect.gen(function* () {
      const s = yield* TaskStore.TaskStore
      yield* s.insert([oneShot("t", 0)])
      const claim = {
        owner: "A",
        now: 1_000,
        limit: 10,
        leaseMs: 30_000,
        handlers: ["record"],
        whileSessionHeld: true,
      }
      // A's session has ended (or never began): its lock is free.
      expect(yield* s.claim(claim)).toEqual([])
      expect((yield* s.counts).scheduled).toBe(1)
      // Holding the lock, the same claim takes the row.
      const session = s.session
      if (session === undefined) throw new Error("a PostgreSQL store has sessions")
      const claimed = yield* Effect.scoped(Effect.andThen(session("A"), s.claim(claim)))
      expect(claimed.map((r) => [r.id, r.leaseOwner])).toEqual([["t", "A"]])
    }).pipe(Effect.provide(Postgres.layer({ url: db.url }))),
  )
})
