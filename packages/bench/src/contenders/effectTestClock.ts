import { Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import { heapGuardBytes, heapUsed } from "../lib/env.ts"
import {
  CHECK_MASK,
  type VirtualContender,
  type VirtualInstance,
  type Workload,
} from "./virtual.ts"

/** Virtual-time steps per run: the budget is checked between two `TestClock.adjust` calls. */
const STEPS = 200

/**
 * (c) One Effect fiber per task: `Effect.runForkWith(context)` of `Effect.sleep(delay)` then the
 * job, under TestClock, then `TestClock.adjust` to the end in steps. TestClock keeps sleeps in a
 * sorted array (binary search plus splice per sleep) and wakes them one at a time, waiting for
 * each woken fiber to go idle, so scheduling is quadratic and waking costs a scheduler turn per
 * fiber: this contender is cut off by the time budget.
 */
export const effectTestClock: VirtualContender = {
  key: "effect",
  name: "Effect fiber per task (TestClock)",
  bounded: true,
  create: async (): Promise<VirtualInstance> => {
    const scope = Scope.makeUnsafe()
    // No "test is not advancing the clock" warning while a long schedule phase runs.
    const context = await Effect.runPromise(
      Layer.buildWithScope(TestClock.layer({ warningDelay: "10 minutes" }), scope),
    )
    const fork = Effect.runForkWith(context)
    const runPromise = Effect.runPromiseWith(context)
    let woken = 0
    let scheduled = 0
    let now = 0
    return {
      schedule: (w: Workload, o) => {
        const { delays, job } = w
        const wake = Effect.sync(() => {
          woken++
          job()
        })
        const guard = heapGuardBytes()
        for (let k = 0; k < w.n; k++) {
          // runFork evaluates the fiber at once, so its sleep is registered on return.
          fork(Effect.andThen(Effect.sleep(delays[k] as number), wake))
          scheduled++
          if ((k & CHECK_MASK) === CHECK_MASK) {
            if (performance.now() > o.deadline) return { done: scheduled, cutOff: "time budget" }
            if (heapUsed() > guard) return { done: scheduled, cutOff: "heap guard" }
          }
        }
        return { done: scheduled }
      },
      run: async (w: Workload, deadline: number) => {
        const step = Math.max(1, Math.ceil(w.end / STEPS))
        while (now < w.end) {
          const to = Math.min(w.end, now + step)
          await runPromise(TestClock.adjust(to - now))
          now = to
          if (now < w.end && performance.now() > deadline) {
            return { done: woken, cutOff: "time budget" }
          }
        }
        return { done: woken }
      },
      figures: () => ({ scheduled, woken }),
      close: async () => {
        // Stops TestClock's warning fiber; fibers still asleep are dropped with the clock
        // (interrupting each one would search the sorted array again, quadratically).
        await Effect.runPromise(Scope.close(scope, Exit.void))
      },
    }
  },
}
