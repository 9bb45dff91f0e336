/**
 * A loop's wake-up: one fiber waits for the earliest of a timer and a wake from elsewhere (a
 * finished run, an insert, a command), and nothing else. The runtime's timing actor and health
 * watcher and the durable store's dispatcher each wait on one.
 *
 * Ground rules:
 * 1. A wake is never lost: one that comes while nobody waits makes the next {@link Wakeup.wait}
 *    return at once (the waiter then looks again). {@link Wakeup.reset} forgets such wakes, for a
 *    waiter about to look at everything they could signal.
 * 2. A wait never outlasts its timer, and a timer is never longer than {@link MAX_SLEEP_MS}: a
 *    longer wait returns after that, and its caller, which loops, looks and waits again. Nothing
 *    fires early.
 * 3. The waiter says what would be worth waking it for with {@link Wakeup.wakeBefore} (the time
 *    it sleeps toward); {@link Wakeup.wakeIfBefore} wakes it only for an earlier time, and a wake
 *    sets it back to -Infinity, so a burst of commands wakes it once.
 * 4. A wait's timer runs on Effect's `Clock` (so `TestClock` moves it) unless the wake-up was
 *    made with `timer: "node"`: then it is one Node timer, for a waiter on the live clock that
 *    wakes often (no race between two fibers per wait).
 *
 * **Example** (A loop that looks when its next work is due, or when work is added sooner)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Wakeup } from "@tickwork/runtime/Wakeup"
 *
 * const wakeup = new Wakeup()
 * let nextDue = Number.POSITIVE_INFINITY // when the earliest work is due, ms on `now`'s clock
 *
 * const loop = (now: () => number) =>
 *   Effect.gen(function* () {
 *     for (;;) {
 *       // … start the work that is due and look up nextDue, then sleep toward it:
 *       wakeup.wakeBefore = nextDue
 *       yield* wakeup.wait(nextDue - now())
 *     }
 *   })
 *
 * // Work added elsewhere wakes the loop only when it is due sooner than what it sleeps toward.
 * const add = (at: number) => {
 *   nextDue = Math.min(nextDue, at)
 *   wakeup.wakeIfBefore(at)
 * }
 * ```
 *
 * @since 0.5.0
 */
import { Effect } from "effect"

/**
 * The longest single timer, ms: Node's timers overflow above 2^31-1 ms and fire at once.
 *
 * @category models
 * @since 0.5.0
 */
export const MAX_SLEEP_MS = 2 ** 31 - 1

/**
 * One waiter's wake-up. Not shared by two waiting fibers: a second `wait` while one is parked
 * replaces the first's resumption.
 *
 * @category constructors
 * @since 0.5.0
 */
export class Wakeup {
  /**
   * The time the waiter sleeps toward, in its own time unit (ms on its clock): a
   * {@link wakeIfBefore} with an earlier time wakes it. -Infinity: none does (it is working, or
   * waits only for {@link wake}); +Infinity: any does. Set by the waiter; a wake sets it back to
   * -Infinity.
   */
  wakeBefore = Number.NEGATIVE_INFINITY
  /** A wake that came while nobody waited: the next wait returns at once. */
  private pending = false
  /** The parked waiter's resumption, while it waits. */
  private parked: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  /** The Node timer of a parked wait (`timer: "node"` only). */
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private readonly nodeTimer: boolean

  constructor(options?: {
    /**
     * `"effect"` (default): a wait's timer is `Effect.sleep`, on the fiber's `Clock`.
     * `"node"`: one Node timer, on the live monotonic clock only.
     */
    readonly timer?: "effect" | "node" | undefined
  }) {
    this.nodeTimer = options?.timer === "node"
  }

  /** Wakes the waiter now, or makes its next wait return at once. */
  wake(): void {
    this.wakeBefore = Number.NEGATIVE_INFINITY
    const resume = this.parked
    if (resume !== undefined) {
      this.parked = undefined
      this.clearTimer()
      resume(Effect.void)
    } else {
      this.pending = true
    }
  }

  /** Wakes the waiter if `at` is before the time it sleeps toward ({@link wakeBefore}). */
  wakeIfBefore(at: number): void {
    if (at < this.wakeBefore) this.wake()
  }

  /**
   * Forgets wakes that came while nobody waited and sleeps toward nothing: for a waiter about to
   * look at everything those wakes could have signalled (in the same synchronous step).
   */
  reset(): void {
    this.pending = false
    this.wakeBefore = Number.NEGATIVE_INFINITY
  }

  /** Whether the waiter is parked with no wake pending. */
  get idle(): boolean {
    return this.parked !== undefined && !this.pending
  }

  /**
   * Waits until {@link wake}, or until `ms` have passed (at most {@link MAX_SLEEP_MS}; absent or
   * +Infinity: no timer). Returns at once if a wake came while nobody waited.
   */
  wait(ms: number = Number.POSITIVE_INFINITY): Effect.Effect<void> {
    const timed = ms < Number.POSITIVE_INFINITY
    const bounded = Math.max(0, Math.min(ms, MAX_SLEEP_MS))
    if (!timed) return this.park(undefined)
    if (this.nodeTimer) return this.park(bounded)
    return Effect.raceFirst(this.park(undefined), Effect.sleep(bounded))
  }

  /** Parks until a wake, or until a Node timer after `ms` when given. */
  private park(ms: number | undefined): Effect.Effect<void> {
    return Effect.callback<void>((resume) => {
      if (this.pending) {
        this.pending = false
        resume(Effect.void)
        return
      }
      this.parked = resume
      if (ms !== undefined) {
        this.timer = setTimeout(() => {
          this.timer = undefined
          if (this.parked === resume) this.parked = undefined
          resume(Effect.void)
        }, ms)
      }
      return Effect.sync(() => {
        this.clearTimer()
        if (this.parked === resume) this.parked = undefined
      })
    })
  }

  /** Cancels the parked wait's Node timer: a woken waiter must not keep the process alive. */
  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
  }
}
