/**
 * Clocks for the deterministic driver. The core never reads time by itself (SPEC §2): a driver
 * asks its {@link Clock}, and the kernel gets `now` as a parameter.
 *
 * @since 0.1.0
 */
import { InvalidTime, show } from "./Errors.ts"

/**
 * A source of the current time in whole epoch milliseconds; never decreasing.
 *
 * @category models
 * @since 0.1.0
 */
export interface Clock {
  readonly now: () => number
}

/**
 * A clock that moves only when told to, and never backwards.
 *
 * **Example** (Virtual time)
 *
 * ```ts
 * import { Clock } from "@tickwork/core"
 * const clock = new Clock.ManualClock(1_000)
 * clock.advance(500)
 * clock.now() // 1500
 * clock.set(1_200) // throws InvalidTime: the clock cannot move backwards
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export class ManualClock implements Clock {
  private current: number

  constructor(start = 0) {
    if (!Number.isSafeInteger(start)) {
      throw new InvalidTime({
        field: "start",
        value: start,
        message: `start must be a safe integer number of epoch ms, got ${show(start)}`,
      })
    }
    this.current = start
  }

  readonly now = (): number => this.current

  /** Moves the clock to `time`; throws {@link InvalidTime} if that is earlier or not a safe integer. */
  set(time: number): void {
    if (!Number.isSafeInteger(time)) {
      throw new InvalidTime({
        field: "time",
        value: time,
        message: `time must be a safe integer number of epoch ms, got ${show(time)}`,
      })
    }
    if (time < this.current) {
      throw new InvalidTime({
        field: "time",
        value: time,
        message: `the clock cannot move backwards: now is ${this.current}, got ${time}`,
      })
    }
    this.current = time
  }

  /** Moves the clock forward by `ms` (a non-negative safe integer). */
  advance(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new InvalidTime({
        field: "ms",
        value: ms,
        message: `advance takes a non-negative integer of ms, got ${show(ms)}`,
      })
    }
    this.set(this.current + ms)
  }
}

/**
 * Whether a clock can be moved (the driver's `runUntil`/`tick` need one).
 *
 * @category getters
 * @since 0.1.0
 */
export const isManual = (clock: Clock): clock is ManualClock => clock instanceof ManualClock

/**
 * The system clock: epoch milliseconds from the monotonic high-resolution timer
 * (`performance.timeOrigin + performance.now()`), floored to whole ms. It never goes backwards
 * when the wall clock is adjusted, so delays are exact; cron slots are computed from it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const system: Clock = {
  now: () => Math.floor(performance.timeOrigin + performance.now()),
}
