import { describe, expect, it } from "@effect/vitest"
import { Options } from "@tickwork/core"
import { Context, Duration, Effect, Exit, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { type Errors, Schedule, Scheduler } from "../src/index.ts"

/** Records `label@startedAt` for every run. */
const recorder = () => {
  const seen: Array<string> = []
  const job = (label: string) => (run: { startedAt: number }) =>
    Effect.sync(() => {
      seen.push(`${label}@${run.startedAt}`)
    })
  return { seen, job }
}

describe("schedule kinds (SPEC §3)", () => {
  it.effect("once, at, fixed rate, fixed delay and custom run at their slots", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 4 })
      const { seen, job } = recorder()
      yield* s.schedule({ id: "once", schedule: Schedule.once(30), job: job("once") })
      yield* s.schedule({ id: "at", schedule: Schedule.at(45), job: job("at") })
      yield* s.schedule({
        id: "rate",
        schedule: Schedule.fixedRate(25, { delay: 5 }),
        job: job("rate"),
      })
      yield* s.schedule({
        id: "delay",
        schedule: Schedule.fixedDelay(20, { delay: 10 }),
        job: (run) => Effect.andThen(job("delay")(run), Effect.sleep(7)), // each run lasts 7 ms
      })
      yield* s.schedule({
        id: "custom",
        schedule: Schedule.custom((slot) =>
          slot === undefined ? 12 : slot < 40 ? slot * 2 : undefined,
        ),
        job: job("custom"),
      })
      yield* TestClock.adjust(60)
      // fixed delay: starts 10, ends 17 -> 37, ends 44 -> 64
      expect(seen).toEqual([
        "rate@5",
        "delay@10",
        "custom@12",
        "custom@24",
        "once@30",
        "rate@30",
        "delay@37",
        "at@45",
        "custom@48",
        "rate@55",
      ])
      expect(yield* s.status("custom")).toBe("done")
      expect(yield* s.status("once")).toBe("done")
      expect(yield* s.status("rate")).toBe("scheduled")
    }),
  )

  it.effect("cron runs at its matches in its time zone", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2026, 2, 6, 0, 0, 0)) // Friday 2026-03-06
      const s = yield* Scheduler.make()
      const runs: Array<string> = []
      yield* s.schedule({
        schedule: Schedule.cron("0 9 * * MON-FRI", { timeZone: "America/New_York" }),
        job: (run) => Effect.sync(() => runs.push(new Date(run.startedAt).toISOString())),
      })
      yield* TestClock.adjust(Duration.days(4))
      // DST begins on Sunday 2026-03-08: 09:00 New York is 14:00Z before and 13:00Z after.
      expect(runs).toEqual(["2026-03-06T14:00:00.000Z", "2026-03-09T13:00:00.000Z"])
    }),
  )

  it.effect(
    "every matching time in a DST gap runs once, shifted by the gap; none that exists is skipped",
    () =>
      Effect.gen(function* () {
        const runsOf = (expression: string, timeZone: string, from: string) =>
          Effect.gen(function* () {
            yield* TestClock.setTime(Date.parse(from))
            const s = yield* Scheduler.make()
            const runs: Array<string> = []
            yield* s.schedule({
              schedule: Schedule.cron(expression, { timeZone }),
              job: (run) => Effect.sync(() => runs.push(new Date(run.startedAt).toISOString())),
            })
            // A day: the night of the gap and nothing of the next.
            yield* TestClock.adjust(Duration.hours(24))
            return runs
          }).pipe(Effect.scoped)
        // Berlin springs forward at 02:00 on 2026-03-29: 02:00 and 02:30 run at 03:00 and 03:30 CEST.
        expect(yield* runsOf("0,30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z")).toEqual([
          "2026-03-29T01:00:00.000Z",
          "2026-03-29T01:30:00.000Z",
        ])
        // Lord Howe's 30-minute gap (02:00 → 02:30): 02:10 runs shifted, at 02:40, once with 02:40
        // itself; 02:35 exists and runs.
        expect(
          yield* runsOf("10,35,40 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z"),
        ).toEqual(["2026-10-03T15:35:00.000Z", "2026-10-03T15:40:00.000Z"])
      }),
  )

  it.effect("delays and periods accept Effect durations", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const { seen, job } = recorder()
      yield* s.schedule({ schedule: Schedule.once("2 seconds"), job: job("a") })
      yield* s.schedule({ schedule: Schedule.fixedRate(Duration.seconds(3)), job: job("b") })
      yield* TestClock.adjust("7 seconds")
      expect(seen).toEqual(["b@0", "a@2000", "b@3000", "b@6000"])
    }),
  )

  it.effect("a delay of 30 days never fires early and a 2^40 ms delay is exact", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const { seen, job } = recorder()
      const day30 = 30 * 24 * 60 * 60 * 1000
      yield* s.schedule({ schedule: Schedule.once(day30), job: job("month") })
      yield* s.schedule({ schedule: Schedule.once(2 ** 40), job: job("decades") })
      yield* TestClock.adjust(day30 - 1)
      expect(seen).toEqual([])
      yield* TestClock.adjust(1)
      expect(seen).toEqual([`month@${day30}`])
      yield* TestClock.adjust(2 ** 40 - day30 - 1)
      expect(seen).toEqual([`month@${day30}`])
      yield* TestClock.adjust(1)
      expect(seen).toEqual([`month@${day30}`, `decades@${2 ** 40}`])
    }),
  )
})

describe("ordering (SPEC §4)", () => {
  it.effect("equal slots run by priority, then in push order", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      const { seen, job } = recorder()
      yield* s.schedule({
        id: "low",
        priority: "low",
        schedule: Schedule.once(10),
        job: job("low"),
      })
      yield* s.schedule({ id: "n1", schedule: Schedule.once(10), job: job("n1") })
      yield* s.schedule({
        id: "high",
        priority: "high",
        schedule: Schedule.once(10),
        job: job("high"),
      })
      yield* s.schedule({ id: "n2", schedule: Schedule.once(10), job: job("n2") })
      yield* s.schedule({
        id: "early",
        priority: "low",
        schedule: Schedule.once(9),
        job: job("early"),
      })
      yield* TestClock.adjust(10)
      expect(seen).toEqual(["early@9", "high@10", "n1@10", "n2@10", "low@10"])
    }),
  )
})

describe("errors (SPEC §13)", () => {
  it.effect("bad input fails with a typed error and changes nothing", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "taken", schedule: Schedule.once(10), job: Effect.void })
      const before = yield* s.stats
      const cases = [
        [{ schedule: Schedule.once(-1), job: Effect.void }, "InvalidDelay", "delay"],
        [{ schedule: Schedule.once(1.5), job: Effect.void }, "InvalidDelay", "delay"],
        [{ schedule: Schedule.once("1.5 millis"), job: Effect.void }, "InvalidDelay", "delay"],
        [{ schedule: Schedule.at(Number.NaN), job: Effect.void }, "InvalidTime", "time"],
        [{ schedule: Schedule.fixedRate(0), job: Effect.void }, "InvalidPeriod", "period"],
        [
          { schedule: Schedule.once(1), priority: "urgent", job: Effect.void },
          "InvalidPriority",
          "priority",
        ],
        [
          { schedule: Schedule.once(1), retry: { maxRetries: -1 }, job: Effect.void },
          "InvalidRetryPolicy",
          "retry.maxRetries",
        ],
        [
          { schedule: Schedule.cron("61 * * * *"), job: Effect.void },
          "InvalidCronExpression",
          "expression",
        ],
        [
          { schedule: Schedule.cron("* * * * *", { timeZone: "Mars/Olympus" }), job: Effect.void },
          "InvalidTimeZone",
          "timeZone",
        ],
        [{ id: "taken", schedule: Schedule.once(1), job: Effect.void }, "DuplicateTaskId", "id"],
        [{ schedule: Schedule.once(1), job: 42 }, "InvalidOption", "job"],
        [{ schedule: Schedule.once(1), timeout: -5, job: Effect.void }, "InvalidOption", "timeout"],
      ] as const
      for (const [options, tag, field] of cases) {
        const exit = yield* Effect.exit(
          s.schedule(options as unknown as Scheduler.ScheduleOptions<void, never, never>),
        )
        expect(Exit.isFailure(exit), tag).toBe(true)
        const error = Option.getOrThrow(Exit.findErrorOption(exit)) as Errors.ScheduleError
        expect(error._tag).toBe(tag)
        expect(error.field).toBe(field)
        expect(error.message).toContain(field)
      }
      expect(yield* s.stats).toEqual(before)
      expect((yield* s.tasks()).map((t) => t.id)).toEqual(["taken"])
    }),
  )

  it.effect("a layer with bad options fails to build with InvalidOption", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.scoped(Scheduler.make({ workers: 0 })))
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error).toMatchObject({ _tag: "InvalidOption", field: "workers", value: 0 })
    }),
  )

  // Issue 28, item 4: `workers: 1e9` aborted the process ("invalid table size").
  it.effect.each([
    ["workers", Options.bounds.workers.max, 1e9],
    ["ledgerPerTask", Options.bounds.ledgerPerTask.max, 1e9],
    ["ledgerCapacity", Options.bounds.ledgerCapacity.max, 1e12],
    ["streamCapacity", Options.bounds.streamCapacity.max, 1e9],
  ] as const)(
    "%s is bounded: one past its bound is an InvalidOption, the bound is accepted",
    ([field, max, huge]) =>
      Effect.gen(function* () {
        for (const value of [max + 1, huge]) {
          const exit = yield* Effect.exit(Effect.scoped(Scheduler.make({ [field]: value })))
          const error = Option.getOrThrow(Exit.findErrorOption(exit))
          expect(error).toMatchObject({ _tag: "InvalidOption", field, value })
          expect(error.message).toContain(max.toLocaleString("en-US"))
        }
        const s = yield* Effect.scoped(
          Effect.map(Scheduler.make({ [field]: max }), (s) => s.schedule),
        )
        expect(typeof s).toBe("function")
      }),
  )

  it.effect("retention.maxFinished is bounded the same way", () =>
    Effect.gen(function* () {
      const max = Options.bounds.maxFinished.max
      const exit = yield* Effect.exit(
        Effect.scoped(Scheduler.make({ retention: { maxFinished: max + 1 } })),
      )
      expect(Option.getOrThrow(Exit.findErrorOption(exit))).toMatchObject({
        _tag: "InvalidOption",
        field: "retention.maxFinished",
        value: max + 1,
      })
      yield* Effect.scoped(Scheduler.make({ retention: { maxFinished: max } }))
    }),
  )
})

describe("ids, status and retention (SPEC §9)", () => {
  it.effect("an id is reusable once final, with a higher generation", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "job", schedule: Schedule.once(5), job: Effect.void })
      const dup = yield* Effect.exit(
        s.schedule({ id: "job", schedule: Schedule.once(5), job: Effect.void }),
      )
      expect(Exit.isFailure(dup)).toBe(true)
      yield* TestClock.adjust(5)
      const first = Option.getOrThrow(yield* s.info("job"))
      expect(first.state).toBe("done")
      yield* s.schedule({ id: "job", schedule: Schedule.once(5), job: Effect.void })
      const second = Option.getOrThrow(yield* s.info("job"))
      expect(second.state).toBe("scheduled")
      expect(second.generation).toBeGreaterThan(first.generation)
      expect(yield* s.status("never-seen")).toBe("unknown")
      expect(Option.isNone(yield* s.info("never-seen"))).toBe(true)
    }),
  )

  it.effect("final tasks are kept within the retention count", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ retention: { maxFinished: 2 } })
      for (const id of ["a", "b", "c"])
        yield* s.schedule({ id, schedule: Schedule.once(1), job: Effect.void })
      yield* TestClock.adjust(1)
      expect([yield* s.status("a"), yield* s.status("b"), yield* s.status("c")]).toEqual([
        "unknown",
        "done",
        "done",
      ])
    }),
  )
})

class Greeter extends Context.Service<Greeter, { readonly greet: (name: string) => string }>()(
  "test/Greeter",
) {}

describe("jobs", () => {
  it.effect("capture the caller's context for their requirements", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const greetings: Array<string> = []
      yield* s
        .schedule({
          schedule: Schedule.once(1),
          job: Effect.gen(function* () {
            greetings.push((yield* Greeter).greet("tick"))
          }),
        })
        .pipe(Effect.provide(Layer.succeed(Greeter, Greeter.of({ greet: (n) => `hello ${n}` }))))
      yield* TestClock.adjust(1)
      expect(greetings).toEqual(["hello tick"])
    }),
  )

  it.effect("receive their run info", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const infos: Array<unknown> = []
      let fail = true
      yield* s.schedule({
        id: "info",
        schedule: Schedule.once(10),
        retry: { maxRetries: 1, base: 5 },
        job: (run) =>
          Effect.suspend(() => {
            const { id, generation, scheduledFor, startedAt, attempt, runNumber } = run
            infos.push({ id, generation, scheduledFor, startedAt, attempt, runNumber })
            if (!fail) return Effect.void
            fail = false
            return Effect.fail("first")
          }),
      })
      yield* TestClock.adjust(20)
      expect(infos).toEqual([
        {
          id: "info",
          generation: expect.any(Number),
          scheduledFor: 10,
          startedAt: 10,
          attempt: 1,
          runNumber: 1,
        },
        {
          id: "info",
          generation: expect.any(Number),
          scheduledFor: 15,
          startedAt: 15,
          attempt: 2,
          runNumber: 2,
        },
      ])
    }),
  )

  it.effect("may schedule, cancel and query the scheduler while running (SPEC §10)", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      const { seen, job } = recorder()
      yield* s.schedule({ id: "victim", schedule: Schedule.once(10), job: job("victim") })
      yield* s.schedule({
        id: "parent",
        schedule: Schedule.fixedRate(5),
        job: (run) =>
          Effect.gen(function* () {
            seen.push(`parent@${run.startedAt}:${yield* s.status("parent")}`)
            yield* s.schedule({ schedule: Schedule.once(0), job: job("child") })
            yield* s.cancel("victim")
            yield* s.cancel("parent")
          }),
      })
      yield* TestClock.adjust(20)
      expect(seen).toEqual(["parent@0:running", "child@0"])
      expect(yield* s.status("victim")).toBe("cancelled")
      expect(yield* s.status("parent")).toBe("cancelled")
    }),
  )
})
