/**
 * SPEC §20 on stored rows: the claim admits a due row only when every scope it is in (its
 * handler, group and key) has room, as core's `Rules.admit` decides over the scope's running
 * rows and recent starts. SQLite on virtual time (`TestClock`): every run takes `ms` of it and
 * writes `start`/`end` to an effects log, from which concurrency is counted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Errors as CoreErrors, Schedule } from "@tickwork/core"
import { Metrics } from "@tickwork/runtime"
import Database from "better-sqlite3"
import { Clock, Effect, Metric, Option, Schema } from "effect"
import { type DurableScheduler, Handler, StoreAdmin } from "../src/index.ts"
import { advance, inFile, settle, sqlite, withScheduler } from "./helpers.ts"
import { due, type Effect_, peak } from "./limits-fixtures.ts"

/** A handler `name` whose runs take `p.ms` (virtual) and log their start and end. */
const logged = (name = "work") => {
  const log: Array<Effect_> = []
  const handler = Handler.make(name, Schema.Struct({ ms: Schema.Number }), (p, run) =>
    Effect.gen(function* () {
      log.push({ kind: "start", id: run.id, at: yield* Clock.currentTimeMillis })
      yield* Effect.sleep(p.ms)
      log.push({ kind: "end", id: run.id, at: yield* Clock.currentTimeMillis })
    }),
  )
  return { log, handler }
}

const startsOf = (log: ReadonlyArray<Effect_>) =>
  log.filter((e) => e.kind === "start").map((e) => [e.id, e.at] as const)

describe("concurrency limits on SQLite (SPEC §20.1)", () => {
  it.effect("a group runs at most its limit at once; waiters go in priority order; none lost", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { log, handler } = logged()
        yield* withScheduler(
          sqlite(file),
          { handlers: [handler], workers: 8, limits: { groups: { mail: { concurrency: 2 } } } },
          (d) =>
            Effect.gen(function* () {
              for (let k = 0; k < 6; k++) {
                yield* d.schedule({
                  id: `m${k}`,
                  handler,
                  payload: { ms: 100 },
                  schedule: Schedule.once(0),
                  group: "mail",
                  // The last one is high: it goes first among the waiters.
                  priority: k === 5 ? "high" : "normal",
                })
              }
              yield* settle(d)
              const waiting = yield* d.info("m4")
              expect(Option.getOrThrow(waiting).waiting).toEqual({
                cause: "concurrency",
                scope: "group:mail",
                since: 0,
              })
              expect(Option.getOrThrow(yield* d.info("m4")).group).toBe("mail")
              for (let k = 0; k < 5; k++) yield* advance(d, 100)
            }),
        )
        expect(peak(log, () => true)).toBe(2)
        const starts = startsOf(log)
        expect(starts.map(([id]) => id).sort()).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"])
        // m5 (high) was pushed last but starts first; the rest in push order, two per 100 ms.
        expect(starts).toEqual([
          ["m5", 0],
          ["m0", 0],
          ["m1", 100],
          ["m2", 100],
          ["m3", 200],
          ["m4", 200],
        ])
      }),
    ),
  )

  it.effect("a full scope never holds back other scopes or unscoped rows behind it", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { log, handler } = logged()
        yield* withScheduler(
          sqlite(file),
          { handlers: [handler], workers: 8, limits: { keys: { concurrency: 1 } } },
          (d) =>
            Effect.gen(function* () {
              // Ten runs of key a are due first; b's and the unkeyed one come after them.
              for (let k = 0; k < 10; k++) {
                yield* due(d, handler, `a${k}`, 100, 0, { key: "a" })
              }
              yield* due(d, handler, "b0", 100, 0, { key: "b" })
              yield* due(d, handler, "free", 100, 0)
              yield* settle(d)
              expect(startsOf(log).sort()).toEqual([
                ["a0", 0],
                ["b0", 0],
                ["free", 0],
              ])
              for (let k = 0; k < 10; k++) yield* advance(d, 100)
            }),
        )
        // Key a's runs in series, one per 100 ms, in push order; nothing lost.
        expect(peak(log, (id) => id.startsWith("a"))).toBe(1)
        expect(startsOf(log).filter(([id]) => id.startsWith("a"))).toEqual(
          Array.from({ length: 10 }, (_, k) => [`a${k}`, k * 100]),
        )
      }),
    ),
  )

  it.effect("a handler limit (handler:<name>) counts every task of the handler", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { log, handler } = logged("slow")
        const other = logged("fast")
        yield* withScheduler(
          sqlite(file),
          {
            handlers: [handler, other.handler],
            workers: 8,
            limits: { handlers: { slow: { concurrency: 1 } } },
          },
          (d) =>
            Effect.gen(function* () {
              for (let k = 0; k < 3; k++) {
                yield* due(d, handler, `s${k}`, 50, 0)
                yield* due(d, other.handler, `f${k}`, 50, 0)
              }
              yield* settle(d)
              expect(Option.getOrThrow(yield* d.info("s2")).waiting?.scope).toBe("handler:slow")
              for (let k = 0; k < 3; k++) yield* advance(d, 50)
            }),
        )
        expect(peak(log, () => true)).toBe(1)
        expect(startsOf(log)).toEqual([
          ["s0", 0],
          ["s1", 50],
          ["s2", 100],
        ])
        expect(peak(other.log, () => true)).toBe(3)
      }),
    ),
  )
})

describe("waits are visible (SPEC §20.4)", () => {
  it.effect("stats, the tickwork_runs_waiting gauge and StoreAdmin.info show the waits", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = logged()
        yield* withScheduler(
          sqlite(file),
          {
            handlers: [handler],
            workers: 8,
            runtime: { name: "limited" },
            shutdown: "interrupt",
            limits: {
              groups: { one: { concurrency: 1 }, api: { rate: { max: 1, per: 60_000 } } },
            },
          },
          (d) =>
            Effect.gen(function* () {
              for (let k = 0; k < 3; k++) {
                yield* due(d, handler, `c${k}`, 60_000, 0, { group: "one" })
                yield* due(d, handler, `r${k}`, 0, 0, { group: "api" })
              }
              yield* settle(d)
              expect((yield* d.stats).waiting).toEqual({ concurrency: 2, "rate-limited": 2 })
              // The gauges re-read the store at most every STORE_COUNTS_REFRESH_MS.
              yield* advance(d, 5_000)
              yield* advance(d, 5_000)
              const m = Metrics.forScheduler("limited")
              expect((yield* Metric.value(m.waiting("concurrency"))).value).toBe(2)
              expect((yield* Metric.value(m.waiting("rate-limited"))).value).toBe(2)
            }),
        )
        // Read by an operator's tool once the scheduler has closed (it handed its run back):
        // the waits stay recorded on the rows.
        const info = yield* Effect.scoped(
          Effect.flatMap(StoreAdmin.open(file, { readOnly: true }), (admin) => admin.info("r2")),
        )
        expect([info.group, info.waiting]).toEqual([
          "api",
          { cause: "rate-limited", scope: "group:api", since: 0, until: 60_000 },
        ])
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
    ),
  )
})

describe("rate limits on SQLite (SPEC §20.2)", () => {
  it.effect(
    "at most max starts in any window of per; a wait records until; the boundary is exact",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { log, handler } = logged()
          yield* withScheduler(
            sqlite(file),
            {
              handlers: [handler],
              workers: 8,
              limits: { groups: { api: { rate: { max: 2, per: 1_000 } } } },
            },
            (d) =>
              Effect.gen(function* () {
                for (let k = 0; k < 5; k++) {
                  yield* due(d, handler, `r${k}`, 0, 0, { group: "api" })
                }
                yield* settle(d)
                expect(Option.getOrThrow(yield* d.info("r2")).waiting).toEqual({
                  cause: "rate-limited",
                  scope: "group:api",
                  since: 0,
                  until: 1_000,
                })
                // One ms before the window opens nothing more starts; at 1,000 two do.
                yield* advance(d, 999)
                expect(startsOf(log).length).toBe(2)
                yield* advance(d, 1)
                expect(startsOf(log).length).toBe(4)
                yield* advance(d, 1_000)
              }),
          )
          expect(startsOf(log)).toEqual([
            ["r0", 0],
            ["r1", 0],
            ["r2", 1_000],
            ["r3", 1_000],
            ["r4", 2_000],
          ])
        }),
      ),
  )
})

describe("recorded starts are pruned (SPEC §20.2)", () => {
  it.effect("a scope's starts go with the retention, but never while inside its window", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { handler } = logged()
        const starts = () => {
          const db = new Database(file, { readonly: true })
          try {
            return (
              db.prepare("SELECT COUNT(*) AS n FROM tickwork_scope_starts").get() as { n: number }
            ).n
          } finally {
            db.close()
          }
        }
        yield* withScheduler(
          sqlite(file),
          {
            handlers: [handler],
            retention: 60_000,
            // The api window (10 minutes) is longer than the retention; the keys' is shorter.
            limits: {
              keys: { rate: { max: 5, per: 1_000 } },
              groups: { api: { rate: { max: 1, per: 600_000 } } },
            },
          },
          (d) =>
            Effect.gen(function* () {
              yield* due(d, handler, "one-off", 0, 0, { key: "customer-1" })
              yield* due(d, handler, "api", 0, 0, { group: "api" })
              // Past the retention and pruner passes, the group's start still holds its window.
              for (let k = 0; k < 3; k++) yield* advance(d, 60_000)
              yield* due(d, handler, "api-2", 0, 0, { group: "api" })
              yield* settle(d)
              expect(Option.getOrThrow(yield* d.info("api-2")).waiting).toMatchObject({
                cause: "rate-limited",
                until: 600_000,
              })
            }),
        )
        // Read once the store is closed: the key's start was pruned, the group's is kept.
        expect(starts()).toBe(1)
      }),
    ),
  )
})

describe("a debounce under a key limit (SPEC §20.1, §20.3)", () => {
  it.effect("a pending holder moved to a later slot starts there, waiting or not", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { log, handler } = logged()
        yield* withScheduler(
          sqlite(file),
          { handlers: [handler], workers: 4, limits: { keys: { concurrency: 1 } } },
          (d) =>
            Effect.gen(function* () {
              const keyed = (id: string, ms: number, at: number, dedup?: "debounce") =>
                d.scheduleDeduplicated({
                  id,
                  handler,
                  payload: { ms },
                  schedule: Schedule.once(at),
                  key: "k",
                  ...(dedup === undefined ? {} : { dedup: { key: "d", mode: dedup } }),
                })
              // `a` holds the key 0..200; holder `h` is due at 50 and waits on the key.
              yield* keyed("a", 200, 0)
              yield* keyed("h", 10, 50, "debounce")
              yield* advance(d, 100)
              expect(Option.getOrThrow(yield* d.info("h")).waiting?.cause).toBe("concurrency")
              // At 100 a debounce moves it to slot 230, after `a` ends (200).
              const r = yield* keyed("h2", 10, 130, "debounce")
              expect(r).toEqual({ id: "h", outcome: "replaced" })
              yield* settle(d)
              expect(Option.getOrThrow(yield* d.info("h")).waiting).toBeUndefined()
              yield* advance(d, 300)
            }),
        )
        expect(startsOf(log)).toEqual([
          ["a", 0],
          ["h", 230],
        ])
      }),
    ),
  )
})

describe("typed errors (SPEC §20.2)", () => {
  it.effect(
    "a bad limit is an InvalidOption naming the field and value; no scheduler is built",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { handler } = logged()
          const bad = (limits: unknown) =>
            Effect.flip(
              withScheduler(
                sqlite(file),
                {
                  handlers: [handler],
                  limits: limits as DurableScheduler.DurableSchedulerOptions["limits"],
                },
                () => Effect.void,
              ),
            )
          expect(yield* bad({ handlers: { work: { concurrency: 0 } } })).toMatchObject({
            _tag: "InvalidOption",
            field: "limits.handlers.work.concurrency",
            value: 0,
          })
          expect(yield* bad({ keys: { rate: { max: 1, per: -5 } } })).toMatchObject({
            _tag: "InvalidOption",
            field: "limits.keys.rate.per",
            value: -5,
          })
          expect(yield* bad({ queues: {} })).toMatchObject({ field: "limits.queues" })
        }),
      ),
  )

  it.effect(
    "a task's undeclared group, or a key with no per-key limit, is refused; nothing is stored",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { handler } = logged()
          yield* withScheduler(
            sqlite(file),
            { handlers: [handler], limits: { groups: { mail: { concurrency: 1 } } } },
            (d) =>
              Effect.gen(function* () {
                const group = yield* Effect.flip(due(d, handler, "x", 0, 0, { group: "sms" }))
                expect(group).toBeInstanceOf(CoreErrors.InvalidOption)
                expect(group).toMatchObject({ field: "group", value: "sms" })
                const key = yield* Effect.flip(due(d, handler, "x", 0, 0, { key: "k" }))
                expect(key).toMatchObject({ _tag: "InvalidOption", field: "key", value: "k" })
                expect(Option.isNone(yield* d.info("x"))).toBe(true)
                // Fixed once scheduled (SPEC §20.1): update refuses group, and changes nothing.
                yield* d.schedule({
                  id: "m",
                  handler,
                  payload: { ms: 0 },
                  schedule: Schedule.once(60_000),
                  group: "mail",
                })
                const moved = yield* Effect.flip(
                  d.update("m", { group: "other" } as unknown as Parameters<typeof d.update>[1]),
                )
                expect(moved).toMatchObject({ _tag: "InvalidOption", field: "group" })
                expect(Option.getOrThrow(yield* d.info("m")).group).toBe("mail")
              }),
          )
        }),
      ),
  )
})
