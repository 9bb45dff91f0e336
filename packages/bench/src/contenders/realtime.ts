/**
 * Contenders for real-clock lateness (part 3). Each one arms N tasks at absolute slots (epoch ms
 * on the monotonic clock, `performance.timeOrigin + performance.now()`, whole ms) and calls
 * `started(k)` at the moment task k's job starts. The harness owns the clock readings, so a
 * contender only has to arm its timers and call back.
 *
 * Extension point: the tickwork Effect runtime (@tickwork/runtime) becomes a row by adding one
 * `RealtimeContender` to `realtimeContenders` whose `start` builds `Scheduler.layer()` into a
 * scope, schedules task k with `Schedule.at(slots[k])` and a job that calls `started(k)`, and
 * whose `stop` closes that scope; then add "@tickwork/runtime": "workspace:*" to package.json
 * and `{ "path": "../runtime" }` to the references in tsconfig.json. An "inspection on/off"
 * comparison is two such rows built with different layer options.
 */
import { spawn } from "node:child_process"
import { Effect, type Fiber } from "effect"
import { TypedHeap } from "../baselines/TypedHeap.ts"
import { epochNow } from "../lib/env.ts"

export interface RealtimeRun {
  /** Cancels whatever has not started (called once, after the window or on a cut-off). */
  stop(): void
}

export interface RealtimeContender {
  readonly key: string
  readonly name: string
  /** The reference row ("the limit"). */
  readonly limit?: boolean
  /**
   * Arms task k for `slots[k]`. Must return once every task is armed (the harness times this
   * and opens the window after it); must not start a job before returning.
   */
  start(slots: Float64Array, started: (k: number) => void): RealtimeRun
}

/** The integer delay a caller would pass for `slot`, measured from the whole-ms clock. */
const delayTo = (slot: number): number => Math.max(0, slot - Math.floor(epochNow()))

/**
 * The limit: all slots in a typed heap, one `setTimeout` armed for the earliest; when it
 * fires, run everything due (slot <= now), then re-arm for the new earliest. A task never
 * starts before its slot; lateness is the timer's granularity plus the work in front of it.
 */
export const singleTimer: RealtimeContender = {
  key: "single-timer",
  name: "heap + one setTimeout (limit)",
  limit: true,
  start: (slots, started) => {
    const heap = new TypedHeap()
    for (let k = 0; k < slots.length; k++) heap.push(slots[k] as number, k, k)
    let timer: ReturnType<typeof setTimeout> | undefined
    const tick = (): void => {
      timer = undefined
      for (;;) {
        const now = epochNow()
        while (heap.size > 0 && heap.topSlot() <= now) {
          const k = heap.topTask()
          heap.pop()
          started(k)
        }
        if (heap.size === 0) return
        const wait = heap.topSlot() - epochNow()
        if (wait > 0) {
          timer = setTimeout(tick, Math.ceil(wait))
          return
        }
      }
    }
    if (heap.size > 0) timer = setTimeout(tick, Math.ceil(Math.max(0, heap.topSlot() - epochNow())))
    return {
      stop: () => {
        if (timer !== undefined) clearTimeout(timer)
      },
    }
  },
}

/** One Node `setTimeout` per task, with the integer delay to its slot. */
export const timeoutPerTask: RealtimeContender = {
  key: "set-timeout",
  name: "setTimeout per task",
  start: (slots, started) => {
    const timers: Array<ReturnType<typeof setTimeout>> = new Array(slots.length)
    for (let k = 0; k < slots.length; k++) {
      timers[k] = setTimeout(started, delayTo(slots[k] as number), k)
    }
    return {
      stop: () => {
        for (const t of timers) clearTimeout(t)
      },
    }
  },
}

/** One fiber per task on the live clock: `Effect.runFork(Effect.sleep(delay) then the job)`. */
export const effectSleepPerTask: RealtimeContender = {
  key: "effect-sleep",
  name: "Effect.sleep per task (runFork)",
  start: (slots, started) => {
    const fibers: Array<Fiber.Fiber<void>> = new Array(slots.length)
    for (let k = 0; k < slots.length; k++) {
      fibers[k] = Effect.runFork(
        Effect.andThen(
          Effect.sleep(delayTo(slots[k] as number)),
          Effect.sync(() => started(k)),
        ),
      )
    }
    return {
      stop: () => {
        for (const f of fibers) f.interruptUnsafe()
      },
    }
  },
}

/**
 * The same contender with a competing CPU load: a second process spinning on one core from
 * arming until `stop`, so the row shows the headroom left when the machine is shared (on a
 * 2-core machine, one core is then left for everything else).
 */
export const withLoad = (c: RealtimeContender): RealtimeContender => ({
  key: `${c.key}+load`,
  name: `${c.name} + a spinning process`,
  start: (slots, started) => {
    const spinner = spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" })
    const run = c.start(slots, started)
    return {
      stop: () => {
        run.stop()
        spinner.kill("SIGKILL")
      },
    }
  },
})

export const realtimeContenders: ReadonlyArray<RealtimeContender> = [
  singleTimer,
  timeoutPerTask,
  effectSleepPerTask,
]
