/**
 * Deduplication keys on durable stores (SPEC §20.3): core's `Rules.decideDedup` applied in one
 * store transaction, on SQLite (under the TestClock) and PostgreSQL (including two schedulers
 * on separate connections scheduling one singleton key at once).
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Deferred, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { type DurableScheduler, Handler, Postgres, type TaskStore } from "../src/index.ts"
import { recording, settle, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

type D = DurableScheduler.DurableSchedulerShape

const task = (
  n: number,
  dedup: { key: string; mode?: "singleton" | "debounce" | "throttle"; window?: number },
  at = 1_000,
) => ({
  handler: "record",
  payload: { n },
  schedule: Schedule.once(at),
  dedup,
})

/** The ids of tasks in the store (live and final). */
const ids = (d: D) => Effect.map(d.tasks(), (list) => list.map((t) => t.id).sort())

/** Waits (bounded, on the real clock or the TestClock's yields) until `id` is `state`. */
const until = (d: D, id: string, state: string) =>
  Effect.gen(function* () {
    for (let k = 0; k < 2_000; k++) {
      if ((yield* d.status(id)) === state) return
      yield* settle(d)
      yield* Effect.sleep(5)
    }
    expect(yield* d.status(id)).toBe(state)
  })

const singleton = (d: D) =>
  Effect.gen(function* () {
    const first = yield* d.scheduleDeduplicated({ ...task(1, { key: "k" }), id: "a" })
    expect(first).toEqual({ id: "a", outcome: "created" })
    // The request's own id is not taken: nothing is created, the holder's id answers.
    const second = yield* d.scheduleDeduplicated({ ...task(2, { key: "k" }), id: "b" })
    expect(second).toEqual({ id: "a", outcome: "deduplicated" })
    expect(yield* d.schedule(task(3, { key: "k" }))).toBe("a")
    expect(yield* ids(d)).toEqual(["a"])
    expect(yield* d.status("b")).toBe("unknown")
    expect((yield* d.info("a")).pipe((o) => (o._tag === "Some" ? o.value.dedup : "none"))).toEqual({
      key: "k",
      mode: "singleton",
    })
    const events = (yield* d.ledger("a")).filter((o) => o.kind === "deduplicated")
    expect(events).toHaveLength(2)
    expect(events[0]).toMatchObject({ cause: "deduplicated", detail: 'key "k", mode singleton' })
    // Once the holder is final the key is free: the next request creates the new holder.
    expect(yield* d.cancel("a")).toBe(true)
    expect(yield* d.scheduleDeduplicated({ ...task(4, { key: "k" }), id: "c" })).toEqual({
      id: "c",
      outcome: "created",
    })
    // A task without the key is untouched by it.
    expect(yield* d.scheduleDeduplicated({ ...task(5, { key: "other" }), id: "e" })).toEqual({
      id: "e",
      outcome: "created",
    })
  })

const debounce = (d: D) =>
  Effect.gen(function* () {
    const mode = "debounce" as const
    yield* d.schedule({ ...task(1, { key: "d", mode }, 5_000), id: "h", priority: "low" })
    const before = yield* d.info("h")
    const dueBefore = before._tag === "Some" ? before.value.scheduledFor : 0
    const done = yield* d.scheduleDeduplicated({
      ...task(2, { key: "d", mode }, 9_000),
      id: "ignored",
    })
    expect(done).toEqual({ id: "h", outcome: "replaced" })
    const info = yield* d.info("h")
    // Its slot moves to the request's schedule computed at the request's time (a delay of 9 s
    // instead of 5 s: 4 s later, plus the time between the two calls on a real clock).
    const moved = info._tag === "Some" ? info.value.scheduledFor - dueBefore : 0
    expect(moved).toBeGreaterThanOrEqual(4_000)
    expect(moved).toBeLessThan(64_000)
    expect(info._tag === "Some" && info.value).toMatchObject({
      payload: { n: 2 },
      // Left out by the request: stays.
      priority: "low",
      generation: 1,
    })
    const kinds = (yield* d.ledger("h")).map((o) => o.kind)
    expect(kinds).toEqual(["updated", "deduplicated"])
    // A bad replacement is the update's typed error, and the holder is unchanged.
    const bad = yield* Effect.flip(
      d.schedule({ ...task(3, { key: "d", mode }), priority: "urgent" as never }),
    )
    expect(bad).toMatchObject({ _tag: "InvalidPriority", field: "priority", value: "urgent" })
    const other = yield* Effect.flip(
      d.schedule({ ...task(3, { key: "d", mode }), handler: "slow" }),
    )
    expect(other).toMatchObject({ _tag: "InvalidOption", field: "handler", value: "slow" })
    const after = yield* d.info("h")
    expect(after._tag === "Some" && after.value).toMatchObject({
      payload: { n: 2 },
      scheduledFor: dueBefore + moved,
    })
    expect(yield* ids(d)).toEqual(["h"])
  })

describe("SQLite: deduplication keys (SPEC §20.3)", () => {
  const run = (body: (d: D) => Effect.Effect<void, unknown>) =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      const slow = Handler.make("slow", Schema.Struct({ n: Schema.Number }), () => Effect.never)
      yield* withScheduler(sqlite(t.file()), { handlers: [handler, slow] }, body)
      t.cleanup()
    })

  it.effect("singleton: one live task per key; the key is free once it is final", () =>
    run(singleton),
  )

  it.effect("debounce: the pending holder takes the request in place, as update does", () =>
    run(debounce),
  )

  it.live("debounce: a running holder is left alone and the request creates the next holder", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const gate = yield* Deferred.make<void>()
      const slow = Handler.make("slow", Schema.Struct({ n: Schema.Number }), () =>
        Deferred.await(gate),
      )
      yield* withScheduler(sqlite(t.file()), { handlers: [slow] }, (d) =>
        Effect.gen(function* () {
          const key = { key: "r", mode: "debounce" as const }
          yield* d.schedule({ ...task(1, key, 0), handler: slow, id: "first" })
          yield* until(d, "first", "running")
          const next = yield* d.scheduleDeduplicated({
            ...task(2, key, 60_000),
            handler: slow,
            id: "next",
          })
          expect(next).toEqual({ id: "next", outcome: "created" })
          // The new holder is the one a later request replaces.
          const third = yield* d.scheduleDeduplicated({ ...task(3, key, 50), handler: slow })
          expect(third).toEqual({ id: "next", outcome: "replaced" })
          expect((yield* d.info("next")).pipe((o) => o._tag === "Some" && o.value.payload)).toEqual(
            { n: 3 },
          )
        }).pipe(Effect.ensuring(Deferred.succeed(gate, undefined))),
      )
      t.cleanup()
    }),
  )

  it.effect("throttle: one task per window from the holder's acceptance, whatever its state", () =>
    run((d) =>
      Effect.gen(function* () {
        const key = { key: "t", mode: "throttle" as const, window: 1_000 }
        expect(yield* d.schedule({ ...task(1, key), id: "w1" })).toBe("w1")
        expect(yield* d.cancel("w1")).toBe(true)
        yield* TestClock.adjust(999)
        // Inside the window: deduplicated into the holder, though it is cancelled.
        expect(yield* d.scheduleDeduplicated({ ...task(2, key), id: "w2" })).toEqual({
          id: "w1",
          outcome: "deduplicated",
        })
        yield* TestClock.adjust(1)
        expect(yield* d.scheduleDeduplicated({ ...task(3, key, 5_000), id: "w3" })).toEqual({
          id: "w3",
          outcome: "created",
        })
        const info = yield* d.info("w3")
        expect(info._tag === "Some" && info.value.dedup).toEqual({
          key: "t",
          mode: "throttle",
          window: 1_000,
        })
      }),
    ),
  )

  it.effect("scheduleAll decides in order: a later request sees an earlier one's holder", () =>
    run((d) =>
      Effect.gen(function* () {
        const out = yield* d.scheduleAll([
          { ...task(1, { key: "b" }), id: "x" },
          { ...task(2, { key: "b" }), id: "y" },
          { handler: "record", payload: { n: 3 }, schedule: Schedule.once(10), id: "plain" },
        ])
        expect(out).toEqual(["x", "x", "plain"])
        expect(yield* ids(d)).toEqual(["plain", "x"])
        // All or none: a bad replacement in the batch keeps nothing of it.
        const bad = yield* Effect.flip(
          d.scheduleAll([
            { ...task(4, { key: "z" }), id: "z1" },
            { ...task(5, { key: "z", mode: "debounce" }), priority: "urgent" as never },
          ]),
        )
        expect(bad).toMatchObject({ _tag: "InvalidPriority", field: "priority" })
        expect(yield* ids(d)).toEqual(["plain", "x"])
      }),
    ),
  )

  it.effect("a bad key is InvalidOption naming dedup.key, and ensure refuses dedup", () =>
    run((d) =>
      Effect.gen(function* () {
        const bad = yield* Effect.flip(d.schedule(task(1, { key: "" })))
        expect(bad).toMatchObject({ _tag: "InvalidOption", field: "dedup.key", value: "" })
        const window = yield* Effect.flip(d.schedule(task(1, { key: "k", window: 5 })))
        expect(window).toMatchObject({ _tag: "InvalidOption", field: "dedup.window", value: 5 })
        const ensured = yield* Effect.flip(d.ensure([{ ...task(1, { key: "k" }), id: "e" }]))
        expect(ensured).toMatchObject({ _tag: "InvalidOption", field: "dedup" })
        expect(yield* ids(d)).toEqual([])
      }),
    ),
  )
})

describe("PostgreSQL: deduplication keys (SPEC §20.3)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })
  const store = (): import("effect").Layer.Layer<TaskStore.TaskStore, unknown> =>
    Postgres.layer({ url: db.url })
  const run = (body: (d: D) => Effect.Effect<void, unknown>) =>
    Effect.gen(function* () {
      const { handler } = recording()
      const slow = Handler.make("slow", Schema.Struct({ n: Schema.Number }), () => Effect.never)
      yield* withScheduler(store(), { handlers: [handler, slow], pollInterval: 50 }, body)
    })

  it.live("singleton", () => run(singleton))
  it.live("debounce", () => run(debounce))

  it.live(
    "two schedulers on their own connections schedule one singleton key at once: one task, both get its id",
    () =>
      Effect.gen(function* () {
        const { handler } = recording()
        const options = { handlers: [handler], pollInterval: 60_000 }
        yield* withScheduler(store(), options, (one) =>
          withScheduler(store(), options, (two) =>
            Effect.gen(function* () {
              // Several rounds, each a fresh key requested by both at once (many times each), so
              // that their transactions overlap; each round must converge on one holder.
              for (let round = 0; round < 8; round++) {
                const key = { key: `race-${round}` }
                const asks = Array.from({ length: 6 }, (_, k) =>
                  (k % 2 === 0 ? one : two).scheduleDeduplicated(task(k, key, 3_600_000)),
                )
                const got = yield* Effect.all(asks, { concurrency: "unbounded" })
                const holders = new Set(got.map((g) => g.id))
                expect(holders.size).toBe(1)
                expect(got.filter((g) => g.outcome === "created")).toHaveLength(1)
              }
              expect(yield* ids(one)).toHaveLength(8)
            }),
          ),
        )
      }),
  )
})
