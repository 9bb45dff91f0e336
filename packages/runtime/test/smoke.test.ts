import { expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { Schedule, Scheduler } from "../src/index.ts"

it.effect("runs a one-shot at its slot and a fixed rate on its grid", () =>
  Effect.gen(function* () {
    const s = yield* Scheduler.make({ workers: 2 })
    const seen: Array<string> = []
    const once = yield* s.schedule({
      id: "once",
      schedule: Schedule.once(100),
      job: (run) => Effect.sync(() => seen.push(`once@${run.startedAt}`)),
    })
    yield* s.schedule({
      id: "rate",
      schedule: Schedule.fixedRate(40),
      job: (run) => Effect.sync(() => seen.push(`rate@${run.startedAt}`)),
    })
    yield* TestClock.adjust(120)
    expect(seen).toEqual(["rate@0", "rate@40", "rate@80", "once@100", "rate@120"])
    expect(yield* s.status(once)).toBe("done")
    const ledger = yield* s.ledger("rate")
    expect(ledger.map((o) => o.kind)).toEqual(["ran", "ran", "ran", "ran"])
    expect(Option.isSome(yield* s.nextSlot)).toBe(true)
  }),
)

it.effect("wakes for an earlier insert", () =>
  Effect.gen(function* () {
    const s = yield* Scheduler.make()
    const seen: Array<number> = []
    yield* s.schedule({
      schedule: Schedule.once(10_000),
      job: (r) => Effect.sync(() => seen.push(r.startedAt)),
    })
    yield* TestClock.adjust(1_000)
    yield* s.schedule({
      schedule: Schedule.once(1_000),
      job: (r) => Effect.sync(() => seen.push(r.startedAt)),
    })
    yield* TestClock.adjust(1_000)
    expect(seen).toEqual([2_000])
    yield* TestClock.adjust(8_000)
    expect(seen).toEqual([2_000, 10_000])
  }),
)

it.effect("interrupts a running task on cancel with interrupt", () =>
  Effect.gen(function* () {
    const s = yield* Scheduler.make()
    const id = yield* s.schedule({ schedule: Schedule.once(0), job: Effect.never })
    yield* TestClock.adjust(1)
    expect(yield* s.status(id)).toBe("running")
    expect(yield* s.cancel(id, { interrupt: true })).toBe(true)
    yield* TestClock.adjust(1)
    expect(yield* s.status(id)).toBe("cancelled")
    const kinds = (yield* s.ledger(id)).map((o) => (o.kind === "ran" ? o.outcome.kind : o.kind))
    expect(kinds).toEqual(["cancelled", "interrupted"])
    const f = yield* Effect.forkChild(Effect.void)
    yield* Fiber.join(f)
  }),
)
