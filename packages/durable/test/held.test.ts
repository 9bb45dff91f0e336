/**
 * The table of runs a process holds (`src/internal/held.ts`), on its own: each claim is held from
 * its claim until its completion or hand back commits; the lease guard and renewer watch the
 * table while it holds runs, and shutdown waits for it to empty.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { counters } from "../src/internal/env.ts"
import * as Held from "../src/internal/held.ts"
import type { TaskRow } from "../src/internal/model.ts"

/** Only the fields the table reads. */
const row = (id: string, fence: number): TaskRow => ({ id, fence, slot: 0 }) as unknown as TaskRow

/** Whether a fiber has ended, after letting the others run. */
const ended = <A>(fiber: Fiber.Fiber<A>) =>
  Effect.map(Effect.yieldNow, () => fiber.pollUnsafe() !== undefined)

describe("HeldRuns", () => {
  it.effect(
    "holds a claim by claim and by task, counting it, with its lease known good at the claim",
    () =>
      Effect.gen(function* () {
        const c = counters()
        const held = yield* Held.make(c)
        expect(held.size).toBe(0)
        const h = held.add(row("a", 3), 7, 1_500)
        expect(h).toStrictEqual({
          key: "a@3",
          row: row("a", 3),
          runNumber: 7,
          started: false,
          startedAt: 0,
          finished: false,
          lost: false,
          releasing: false,
          renewedAt: 1_500,
          finishedAt: -1,
          overdue: false,
        })
        expect([held.size, held.ofTask("a"), held.ofTask("b"), c.claimed]).toEqual([
          1,
          h,
          undefined,
          1,
        ])
        expect([...held.values()]).toEqual([h])
      }),
  )

  it.effect("counts the runs inside their handler: started and not yet ended", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      const queued = held.add(row("a", 1), 1, 0)
      const running = held.add(row("b", 1), 1, 0)
      const done = held.add(row("c", 1), 1, 0)
      running.started = true
      done.started = true
      done.finished = true
      expect(held.inHandler).toBe(1)
      queued.started = true
      expect(held.inHandler).toBe(2)
    }),
  )

  it.effect("forgets a claim once: a second forget changes no count", () =>
    Effect.gen(function* () {
      const c = counters()
      const held = yield* Held.make(c)
      const a = held.add(row("a", 1), 1, 0)
      held.add(row("b", 1), 1, 0)
      a.overdue = true
      c.uncommitted = 1
      held.forget(a)
      expect([held.size, held.ofTask("a"), c.uncommitted]).toEqual([1, undefined, 0])
      held.forget(a)
      expect([held.size, c.uncommitted]).toEqual([1, 0])
    }),
  )

  it.effect("a task's later claim stays its run when the earlier claim is forgotten", () =>
    Effect.gen(function* () {
      const c = counters()
      const held = yield* Held.make(c)
      const first = held.add(row("a", 1), 1, 0)
      const second = held.add(row("a", 2), 2, 0)
      expect(held.size).toBe(2)
      c.uncommitted = 1
      held.forget(first)
      expect(held.ofTask("a")).toBe(second)
      // A forgotten claim that is not overdue leaves the uncommitted count alone.
      expect([held.size, c.uncommitted]).toEqual([1, 1])
    }),
  )

  it.effect("opens the watch while runs are held and closes it with the last one", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      const watching = yield* Effect.forkChild(held.holding.await)
      expect(yield* ended(watching)).toBe(false)
      const a = held.add(row("a", 1), 1, 0)
      const b = held.add(row("b", 1), 1, 0)
      expect(yield* ended(watching)).toBe(true)
      held.forget(a)
      // One still held: the watch stays open.
      const still = yield* Effect.forkChild(held.holding.await)
      expect(yield* ended(still)).toBe(true)
      held.forget(b)
      const after = yield* Effect.forkChild(held.holding.await)
      expect(yield* ended(after)).toBe(false)
      yield* Fiber.interrupt(after)
    }),
  )

  it.effect("wakes each watcher when the last run is let go, not before", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      const guard = held.watch()
      const renewer = held.watch()
      const a = held.add(row("a", 1), 1, 0)
      const b = held.add(row("b", 1), 1, 0)
      const g = yield* Effect.forkChild(guard.wait())
      const r = yield* Effect.forkChild(renewer.wait())
      held.forget(a)
      expect([yield* ended(g), yield* ended(r)]).toEqual([false, false])
      held.forget(b)
      expect([yield* ended(g), yield* ended(r)]).toEqual([true, true])
    }),
  )

  it.effect("drained: at once when nothing is held, else when the last run is let go", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      expect(yield* ended(yield* Effect.forkChild(held.drained))).toBe(true)
      const a = held.add(row("a", 1), 1, 0)
      const b = held.add(row("b", 1), 1, 0)
      const waiting = yield* Effect.forkChild(held.drained)
      held.forget(a)
      expect(yield* ended(waiting)).toBe(false)
      held.forget(b)
      expect(yield* ended(waiting)).toBe(true)
    }),
  )

  it.effect("a waiter interrupted before the table drains leaves a later one to be resumed", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      const a = held.add(row("a", 1), 1, 0)
      const gone = yield* Effect.forkChild(held.drained)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(gone)
      const later = yield* Effect.forkChild(held.drained)
      expect(yield* ended(later)).toBe(false)
      held.forget(a)
      expect(yield* ended(later)).toBe(true)
    }),
  )

  it.effect("the latest waiter is resumed, though an earlier one is interrupted", () =>
    Effect.gen(function* () {
      const held = yield* Held.make(counters())
      const a = held.add(row("a", 1), 1, 0)
      const earlier = yield* Effect.forkChild(held.drained)
      yield* Effect.yieldNow
      const latest = yield* Effect.forkChild(held.drained)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(earlier)
      held.forget(a)
      expect(yield* ended(latest)).toBe(true)
    }),
  )
})
