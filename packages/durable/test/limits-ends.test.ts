/**
 * SPEC §20.1 on stored rows when runs end: a stored run counts until its completion commits, so
 * a claim made between a run's end and its commit would decide on a place that is in fact free.
 * These pin what a claim after ends sees: ends that come together are committed together before
 * the next claim, and a worker freed by an end is not given to a later row while the ended run's
 * own scope waiters are held back by its uncommitted place. And a claim records each wait as
 * `Rules.admit` decides it once all the claim's admissions count. SQLite on virtual time
 * (`TestClock`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Deferred, Effect, Layer, Option, Schema } from "effect"
import { Errors, Handler, TaskStore } from "../src/index.ts"
import { advance, inFile, settle, sqlite, withScheduler } from "./helpers.ts"
import { due, timed } from "./limits-fixtures.ts"

describe("a claim after runs end decides on their committed ends (SPEC §20.1, §4)", () => {
  it.effect("runs that end together free their places before the next claim", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const starts: Array<string> = []
        // `gate: true` runs wait for the gate (they end together when it opens); others end at once.
        const handler = Handler.make("h", Schema.Struct({ gate: Schema.Boolean }), (p, run) =>
          Effect.suspend(() => {
            starts.push(`${run.id}@${run.startedAt}`)
            return p.gate ? Deferred.await(gate) : Effect.void
          }),
        )
        yield* withScheduler(
          sqlite(file),
          {
            handlers: [handler],
            workers: 8,
            limits: { groups: { g: { concurrency: 2 } }, keys: { concurrency: 1 } },
          },
          (d) =>
            Effect.gen(function* () {
              const task = (id: string, at: number, key: string, gated: boolean) =>
                d.schedule({
                  id,
                  handler,
                  payload: { gate: gated },
                  schedule: Schedule.once(at),
                  group: "g",
                  key,
                })
              // a (k1) and b (k2) fill g; y (k2, due 10) and x (k1, due 20) wait behind them.
              yield* task("a", 0, "k1", true)
              yield* task("b", 0, "k2", true)
              yield* task("y", 10, "k2", true)
              yield* task("x", 20, "k1", true)
              yield* settle(d)
              yield* advance(d, 50)
              expect(starts).toEqual(["a@0", "b@0"])
              // Both end at 50. Deciding on a's end alone would start x (k1 free, g has room) and
              // leave y, due earlier, behind b's key: with both ends, y goes first (SPEC §4).
              yield* Deferred.succeed(gate, undefined)
              yield* settle(d)
              expect(starts).toEqual(["a@0", "b@0", "y@50", "x@50"])
            }),
        )
      }),
    ),
  )

  it.effect("a worker freed by an end goes to the ended run's scope waiter due first", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { starts, handler } = timed()
        yield* withScheduler(
          sqlite(file),
          { handlers: [handler], workers: 1, limits: { groups: { g: { concurrency: 1 } } } },
          (d) =>
            Effect.gen(function* () {
              // a holds g and the only worker until 200; b (g) is due at 100, c (no group) at 150.
              yield* due(d, handler, "a", 200, 0, { group: "g" })
              yield* due(d, handler, "b", 10, 100, { group: "g" })
              yield* due(d, handler, "c", 10, 150)
              yield* settle(d)
              for (let k = 0; k < 4; k++) yield* advance(d, 100)
            }),
        )
        // At 200 a's end frees both the worker and g's place: b, due first, takes them (SPEC §4).
        expect(starts).toEqual(["a@0", "b@200", "c@210"])
      }),
    ),
  )

  it.effect(
    "a commit failing for a lease holds no claim back: its lapsed lease counts no more",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { starts, handler } = timed()
          let failing = true
          const broken = new Errors.StoreError({
            operation: "commit",
            reason: "other",
            detail: "injected",
            message: "the store failed (injected)",
          })
          // The store's commits of `stuck` fail while `failing` holds; everything else works.
          const store = Layer.effect(
            TaskStore.TaskStore,
            Effect.gen(function* () {
              const base = yield* TaskStore.TaskStore
              return TaskStore.TaskStore.of({
                ...base,
                commit: (changes, context) =>
                  failing && changes.some((c) => c.id === "stuck")
                    ? Effect.fail(broken)
                    : base.commit(changes, context),
              })
            }),
          ).pipe(Layer.provide(sqlite(file)))
          yield* withScheduler(
            store,
            {
              handlers: [handler],
              workers: 4,
              lease: "1 second",
              limits: { groups: { g: { concurrency: 1 } } },
            },
            (d) =>
              Effect.gen(function* () {
                yield* due(d, handler, "stuck", 10, 0, { group: "g" })
                yield* due(d, handler, "other", 0, 20)
                yield* settle(d)
                for (let k = 0; k < 12; k++) yield* advance(d, 100)
                // stuck ended at 10 and its commit fails: claims wait for it until its lease
                // lapses (the watchdog finds it overdue at 1100), then other starts, and stuck
                // again (a lapsed lease makes its row due: a re-delivery).
                const seen = [...starts]
                // The store works again before any assertion: the close drains the commits.
                failing = false
                for (let k = 0; k < 10; k++) yield* advance(d, 1_000)
                expect(seen).toEqual(["stuck@0", "stuck@1100", "other@1100"])
                expect((yield* d.stats).completed).toBe(2)
              }),
          )
        }),
      ),
  )
})

describe("a claim records each wait once all its admissions count (SPEC §20.2)", () => {
  it.effect("a row passed over before a later row takes its group's place waits on the group", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { starts, handler } = timed()
        yield* withScheduler(
          sqlite(file),
          {
            handlers: [handler],
            workers: 4,
            limits: { groups: { g: { concurrency: 1 } }, keys: { rate: { max: 1, per: 20 } } },
          },
          (d) =>
            Effect.gen(function* () {
              const task = (id: string, at: number, ms: number, key?: string) =>
                d.schedule({
                  id,
                  handler,
                  payload: { ms },
                  schedule: Schedule.once(at),
                  group: "g",
                  ...(key === undefined ? {} : { key }),
                })
              // a starts key k's window (until 20); b (k) waits for it from 5; c (no key) takes
              // g's only place at 10, in the claim that passes b over again.
              yield* task("a", 0, 0, "k")
              yield* task("b", 5, 0, "k")
              yield* task("c", 10, 50)
              yield* settle(d)
              yield* advance(d, 5)
              const at5 = Option.getOrThrow(yield* d.info("b")).waiting
              yield* advance(d, 5)
              const at10 = Option.getOrThrow(yield* d.info("b")).waiting
              // Asserted once every run has ended: a failed assertion must not leave c running
              // on the TestClock, which the close would wait for.
              yield* advance(d, 50)
              expect(at5).toMatchObject({ cause: "rate-limited", scope: "key:k" })
              // g is full: b could not start now even with k's window open (SPEC §20.2).
              expect(at10).toEqual({ cause: "concurrency", scope: "group:g", since: 5 })
              expect(starts).toEqual(["a@0", "c@10", "b@60"])
            }),
        )
      }),
    ),
  )
})
