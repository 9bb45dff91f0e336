// The wake-up the timing actor, the health watcher and the durable dispatcher wait on: the
// earliest of a timer and a wake, never a lost wake, never a timer past MAX_SLEEP_MS.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { MAX_SLEEP_MS, Wakeup } from "../src/Wakeup.ts"

/** Whether `fiber` has ended, after letting every fiber that can run do so. */
const ended = (fiber: Fiber.Fiber<unknown, unknown>) =>
  Effect.gen(function* () {
    yield* Effect.yieldNow
    yield* Effect.yieldNow
    return fiber.pollUnsafe() !== undefined
  })

describe("Wakeup", () => {
  describe("wait", () => {
    it.effect("returns when its timer ends, not a ms before", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        const fiber = yield* Effect.forkChild(w.wait(1_000))
        yield* TestClock.adjust(999)
        expect(yield* ended(fiber)).toBe(false)
        expect(w.idle).toBe(true)
        yield* TestClock.adjust(1)
        expect(yield* ended(fiber)).toBe(true)
        expect(w.idle).toBe(false)
      }),
    )

    it.effect("returns at a wake, long before its timer", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        const fiber = yield* Effect.forkChild(w.wait(60_000))
        yield* TestClock.adjust(10)
        w.wake()
        expect(yield* ended(fiber)).toBe(true)
      }),
    )

    it.effect("without a timer, waits for a wake however long", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        const fiber = yield* Effect.forkChild(w.wait())
        yield* TestClock.adjust(10 * MAX_SLEEP_MS)
        expect(yield* ended(fiber)).toBe(false)
        w.wake()
        expect(yield* ended(fiber)).toBe(true)
      }),
    )

    it.effect(
      "a timer past MAX_SLEEP_MS ends at MAX_SLEEP_MS (its caller looks and waits again)",
      () =>
        Effect.gen(function* () {
          const w = new Wakeup()
          const fiber = yield* Effect.forkChild(w.wait(2 ** 40))
          yield* TestClock.adjust(MAX_SLEEP_MS - 1)
          expect(yield* ended(fiber)).toBe(false)
          yield* TestClock.adjust(1)
          expect(yield* ended(fiber)).toBe(true)
        }),
    )
  })

  describe("a wake while nobody waits", () => {
    it.effect("makes the next wait return at once, and only that one", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        w.wake()
        w.wake()
        yield* w.wait(60_000)
        const second = yield* Effect.forkChild(w.wait(60_000))
        expect(yield* ended(second)).toBe(false)
        w.wake()
        expect(yield* ended(second)).toBe(true)
      }),
    )

    it.effect("is forgotten by reset", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        w.wake()
        w.reset()
        const fiber = yield* Effect.forkChild(w.wait(60_000))
        expect(yield* ended(fiber)).toBe(false)
        yield* TestClock.adjust(60_000)
        expect(yield* ended(fiber)).toBe(true)
      }),
    )
  })

  describe("wakeIfBefore", () => {
    it.effect("wakes only for a time before wakeBefore, once per wake", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        // Nobody sleeps toward anything yet: no time wakes it.
        w.wakeIfBefore(0)
        expect(w.idle).toBe(false)
        w.wakeBefore = 500
        const fiber = yield* Effect.forkChild(w.wait(500))
        w.wakeIfBefore(500)
        w.wakeIfBefore(900)
        expect(yield* ended(fiber)).toBe(false)
        w.wakeIfBefore(499)
        expect(yield* ended(fiber)).toBe(true)
        // The wake set wakeBefore back: the rest of a burst leaves no wake pending.
        expect(w.wakeBefore).toBe(Number.NEGATIVE_INFINITY)
        w.wakeIfBefore(1)
        const next = yield* Effect.forkChild(w.wait(100))
        expect(yield* ended(next)).toBe(false)
        yield* TestClock.adjust(100)
        expect(yield* ended(next)).toBe(true)
      }),
    )

    it.effect("+Infinity: any time wakes it", () =>
      Effect.gen(function* () {
        const w = new Wakeup()
        w.wakeBefore = Number.POSITIVE_INFINITY
        const fiber = yield* Effect.forkChild(w.wait())
        w.wakeIfBefore(Number.MAX_SAFE_INTEGER)
        expect(yield* ended(fiber)).toBe(true)
      }),
    )
  })

  describe('timer: "node"', () => {
    it.effect("a wake ends the wait and clears its Node timer", () =>
      Effect.gen(function* () {
        const w = new Wakeup({ timer: "node" })
        const fiber = yield* Effect.forkChild(w.wait(MAX_SLEEP_MS))
        expect(yield* ended(fiber)).toBe(false)
        w.wake()
        expect(yield* ended(fiber)).toBe(true)
        // A timer left behind would show in the wake-up; none is.
        expect((w as unknown as { timer: unknown }).timer).toBeUndefined()
      }),
    )

    it.effect("an interrupted wait clears its Node timer", () =>
      Effect.gen(function* () {
        const w = new Wakeup({ timer: "node" })
        const fiber = yield* Effect.forkChild(w.wait(MAX_SLEEP_MS))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(fiber)
        expect((w as unknown as { timer: unknown }).timer).toBeUndefined()
        expect(w.idle).toBe(false)
      }),
    )

    it.live("the Node timer ends the wait", () =>
      Effect.gen(function* () {
        const w = new Wakeup({ timer: "node" })
        yield* w.wait(1)
      }),
    )
  })
})
