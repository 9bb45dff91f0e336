/**
 * A run's failure is always recorded (SPEC §6.3: no outcome is dropped), whatever its error's
 * text holds: NUL (U+0000), which PostgreSQL's `text` refuses, and lone surrogates, which no
 * store keeps, are stored as U+FFFD on both stores, and the run's failure, ledger entry and
 * `lastError` are there.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, type Layer, Option, Schema } from "effect"
import { type DurableScheduler, Handler, Postgres, type TaskStore } from "../src/index.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { databasePerTest } from "./pg.ts"

const MESSAGE = "bad\u0000byte \ud800 and \udc00 end"
const STORED = "bad\uFFFDbyte \uFFFD and \uFFFD end"

const failing = Handler.make("failing", Schema.Struct({}), () => Effect.fail(new Error(MESSAGE)))

/** Waits on the real clock (PostgreSQL) or moves the TestClock (SQLite) until `id` ends. */
const recorded = (
  store: Layer.Layer<TaskStore.TaskStore, unknown>,
  wait: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<void, unknown>,
) =>
  withScheduler(store, { handlers: [failing] }, (d) =>
    Effect.gen(function* () {
      yield* d.schedule({ id: "t", handler: failing, payload: {}, schedule: Schedule.once(0) })
      yield* wait(d)
      const info = Option.getOrThrow(yield* d.info("t"))
      const ran = (yield* d.ledger("t")).flatMap((o) => (o.kind === "ran" ? [o] : []))
      return {
        state: info.state,
        lastError: info.lastError,
        ran: ran.map((r) => [r.outcome, r.error]),
      }
    }),
  )

const expected = { state: "failed", lastError: STORED, ran: [["failed", STORED]] }

describe("a failure's text with NUL or lone surrogates (SPEC §6.3)", () => {
  it.effect("SQLite: the failure is recorded, its text made storable", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const seen = yield* recorded(sqlite(t.file()), (d) => advance(d, 10))
      t.cleanup()
      expect(seen).toEqual(expected)
    }),
  )

  describe("PostgreSQL", () => {
    const db = databasePerTest()
    it.live(
      "the failure is recorded, its text made storable (a NUL would fail every commit)",
      () =>
        Effect.gen(function* () {
          const seen = yield* recorded(Postgres.layer({ url: db.url }), (d) =>
            Effect.gen(function* () {
              const end = Date.now() + 30_000
              while ((yield* d.status("t")) !== "failed" && Date.now() < end) {
                yield* Effect.sleep(20)
              }
            }),
          )
          expect(seen).toEqual(expected)
        }),
      120_000,
    )
  })
})
