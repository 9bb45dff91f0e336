/**
 * @internal
 * `Scheduler.ensure`'s first half (SPEC §18.2): every declaration checked and decided against
 * the task stored under its id (the core's `Declared.decide`) before anything changes, so a bad
 * declaration leaves the scheduler as it was. The scheduler applies the decisions.
 */
import { Breaker, Declared, Errors, type Kernel, Options, type Time } from "@tickwork/core"
import { Effect } from "effect"
import type { PoolJob } from "../WorkerPool.ts"
import { scheduleOptionKeys } from "./options.ts"

/** What a declaration must carry for the decision; the scheduler's `ScheduleOptions` has it. */
export interface Declarable {
  readonly id: string
  readonly job: unknown
  readonly timeout?: Time.DurationInput | undefined
  readonly breaker?: string | Breaker.BreakerPolicy | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

/** A declaration with its tags (the set's name added) and timeout resolved, and its decision. */
export interface Plan<O> {
  readonly o: O
  readonly d: Declared.Decision
}

/**
 * Decides every declaration (`now`: the scheduler's clock, epoch ms), or the first typed error
 * naming the field and value. O(declarations); reads the kernel, changes nothing.
 */
export const decideAll = <O extends Declarable>(
  kernel: Kernel.Kernel<unknown>,
  declared: ReadonlyArray<O>,
  set: string | undefined,
  now: number,
  defaultTimeoutMs: number,
): { readonly plans: ReadonlyArray<Plan<O>> } | { readonly error: Errors.ScheduleError } => {
  const plans: Array<Plan<O>> = []
  for (const given of declared) {
    const unknownOption = Errors.unknownKey(given, scheduleOptionKeys)
    if (unknownOption !== undefined) return { error: unknownOption }
    // A declared task's id already keeps one live task per id (SPEC §18): a deduplication key
    // (SPEC §20.3) could only make `ensure` return another task's id for it.
    const dedup = (given as { readonly dedup?: unknown }).dedup
    if (dedup !== undefined) {
      return {
        error: Options.invalid("dedup", dedup, "is not taken by ensure: its id keeps one task"),
      }
    }
    const timeoutMs = Options.millis("timeout", given.timeout, defaultTimeoutMs)
    if (typeof timeoutMs !== "number") return { error: timeoutMs }
    if (!Effect.isEffect(given.job) && typeof given.job !== "function")
      return {
        error: Options.invalid("job", given.job, "must be an Effect or a function returning one"),
      }
    let breaker: string | Breaker.Resolved | undefined
    if (typeof given.breaker === "string") {
      if (kernel.breaker(given.breaker) === undefined)
        return {
          error: Options.invalid(
            "breaker",
            given.breaker,
            "must name a breaker defined in the layer's breakers",
          ),
        }
      breaker = given.breaker
    } else if (given.breaker !== undefined) {
      const r = Breaker.resolve(given.breaker)
      if (!("failures" in r)) return { error: r }
      breaker = r
    }
    const o = { ...given, tags: Declared.tagsOf(given.tags, set) }
    const definition = Declared.definitionOf(
      { ...(o as object), breaker } as Parameters<typeof Declared.definitionOf>[0],
      now,
      { job: given.job, timeout: timeoutMs },
      scheduleOptionKeys,
    )
    if (!("plan" in definition)) return { error: definition }
    const current = kernel.definition(given.id, now)
    const job = current?.definition.more.job as PoolJob | undefined
    plans.push({
      // The timeout resolved: one left out of the declaration is the layer's default.
      o: { ...o, timeout: timeoutMs },
      d: Declared.decide(
        definition,
        current === undefined
          ? undefined
          : {
              state: current.state,
              definition: {
                ...current.definition,
                more: { job: job?.job, timeout: job?.timeoutMs },
              },
            },
      ),
    })
  }
  return { plans }
}
