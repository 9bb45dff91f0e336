/**
 * @internal
 * The command model's tasks (public through `@tickwork/runtime/testing/commands`): random task
 * specs and their options, the breakers the model's schedulers share, your templates, and the
 * blueprint either becomes with the outcome pattern of its runs.
 */
import {
  type Breaker,
  type MissedRun,
  type Retry,
  type Rules,
  Schedule,
  type Task,
  type Time,
} from "@tickwork/core"
import type { Effect } from "effect"
import fc from "fast-check"

// ------------------------------------------------------------------ random tasks

/**
 * A random task, as {@link taskSpec} generates it: every kind of schedule, priority, retry
 * policy, missed-run policy and failure policy, what its runs do, and two re-entrant behaviours
 * (a job that schedules a child task, a job that cancels its own task).
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskSpec {
  readonly kind: "once" | "at" | "fixed-rate" | "fixed-delay" | "cron" | "custom"
  /** First-slot delay, ms (for `at`: the instant is `now + delay - 30`, sometimes in the past). */
  readonly delay: number
  /** Period, ms (cron: every `period % 5 + 1` seconds). */
  readonly period: number
  readonly priority: Task.Priority
  readonly maxRetries: number
  readonly jitter: Retry.Jitter
  readonly missedRuns: MissedRun.MissedRunPolicy
  readonly pauseAfter: number
  /** The k-th run (from 0) fails when `fails[k % fails.length]`. */
  readonly fails: ReadonlyArray<boolean>
  /** On its first run, the job schedules a one-off child task due this long after. */
  readonly spawn: number | undefined
  /** The job cancels its own task on this run number. */
  readonly cancelSelfOn: number | undefined
  /**
   * The catch-up window, ms (SPEC §3): on `once`, `at`, `fixed-rate` and `cron` tasks only (the
   * others refuse one). For a one-shot it is a deadline: past it the run expires.
   */
  readonly window?: number | undefined
  /** A tag, for the bulk commands' filters. Default: none. */
  readonly tag?: "a" | "b" | undefined
  /**
   * Its circuit breaker (SPEC §7): `"shared"` joins the model's shared breaker (see
   * {@link breakers}), `"own"` gives it its own ({@link ownBreaker}). Default: none.
   */
  readonly breaker?: "shared" | "own" | undefined
  /** Its flow-control group and key (SPEC §20), declared in {@link Options.limits}. Default: none. */
  readonly group?: string | undefined
  readonly key?: string | undefined
}

/**
 * The circuit breakers the model's schedulers are built with: one shared breaker, `shared`,
 * that opens after 2 failed slots of its tasks and lets a probe through 20 ms later, then 40 ms,
 * up to 80 ms.
 *
 * **Example** (The layer options of a scheduler to compare with the model)
 *
 * ```ts
 * import { TestScheduler } from "@tickwork/runtime/testing"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const layer = TestScheduler.layer({ breakers: Commands.breakers })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const breakers: Readonly<Record<string, Breaker.BreakerPolicy>> = {
  shared: { failures: 2, coolDown: 20, factor: 2, maxCoolDown: 80 },
}

/**
 * A task's own circuit breaker in the model (`breaker: "own"`): opens after 1 failed slot,
 * probes 15 ms later (then 30 ms).
 *
 * **Example** (Its policy)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.ownBreaker.failures // 1
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const ownBreaker: Breaker.BreakerPolicy = {
  failures: 1,
  coolDown: 15,
  factor: 2,
  maxCoolDown: 30,
}

const windowFits = (kind: TaskSpec["kind"]) => kind !== "fixed-delay" && kind !== "custom"

/**
 * The arbitrary of {@link TaskSpec}: small delays and periods (0–60 ms, 1–25 ms) so that random
 * clock moves of a few tens of ms make slots collide, runs late, retries pile up. No window, tag
 * or breaker: see {@link controlledTaskSpec} for those.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.taskSpec, 1)[0]?.kind // "fixed-rate", "cron", …
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const taskSpec: fc.Arbitrary<TaskSpec> = fc.record({
  kind: fc.constantFrom("once", "at", "fixed-rate", "fixed-delay", "cron", "custom"),
  delay: fc.integer({ min: 0, max: 60 }),
  period: fc.integer({ min: 1, max: 25 }),
  priority: fc.constantFrom("high", "normal", "low"),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  jitter: fc.constantFrom("none", "full", "equal"),
  missedRuns: fc.constantFrom("catch-up", "coalesce", "skip"),
  pauseAfter: fc.integer({ min: 0, max: 3 }),
  fails: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
  spawn: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  cancelSelfOn: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
})

/**
 * The arbitrary of the command model's random tasks: {@link taskSpec}, sometimes with a catch-up
 * window (0–30 ms, on the kinds that take one), a tag, and a circuit breaker (the shared one of
 * {@link breakers}, or its own): a scheduler they are given to needs {@link breakers}.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.controlledTaskSpec, 1)[0]?.breaker // "shared", "own" or undefined
 * ```
 *
 * @category arbitraries
 * @since 0.2.0
 */
export const controlledTaskSpec: fc.Arbitrary<TaskSpec> = fc
  .tuple(
    taskSpec,
    fc.record({
      window: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 3 }),
      tag: fc.constantFrom(undefined, "a", "b"),
      breaker: fc.option(fc.constantFrom("shared", "own"), { nil: undefined, freq: 2 }),
    }),
  )
  .map(([spec, { window, tag, breaker }]) => ({
    ...spec,
    // A window only where the kernel takes one: the model schedules accepted tasks.
    window: window !== undefined && windowFits(spec.kind) ? window : undefined,
    tag,
    breaker,
  }))

/**
 * The keys {@link limitedTaskSpec} gives tasks: few, so tasks share them and their limits bind.
 *
 * @category models
 * @since 0.7.0
 */
export const modelKeys: ReadonlyArray<string> = ["k1", "k2", "k3"]

/**
 * The arbitrary of {@link TaskSpec}s under `limits` (SPEC §20): {@link controlledTaskSpec}'s,
 * most of them in one of the declared groups and, when `limits.keys` is declared, under one of
 * {@link modelKeys} — so concurrency and rate limits hold runs back, on both systems.
 *
 * **Example** (Tasks under a serial group and per-key limits)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const specs = Commands.limitedTaskSpec({ groups: { serial: { concurrency: 1 } }, keys: { rate: { max: 1, per: 10 } } })
 * fc.sample(specs, 1)[0]?.group // "serial" or undefined
 * ```
 *
 * @category arbitraries
 * @since 0.7.0
 */
export const limitedTaskSpec = (limits: Rules.Limits): fc.Arbitrary<TaskSpec> =>
  fc
    .tuple(
      controlledTaskSpec,
      fc.option(fc.constantFrom(...Object.keys(limits.groups ?? {}), undefined), {
        nil: undefined,
        freq: 4,
      }),
      limits.keys === undefined
        ? fc.constant(undefined)
        : fc.option(fc.constantFrom(...modelKeys), { nil: undefined, freq: 3 }),
    )
    .map(([spec, group, key]) => ({ ...spec, group, key }))

/**
 * The schedule of a {@link TaskSpec} scheduled at `now`.
 *
 * **Example** (A fixed-rate spec)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const spec: Commands.TaskSpec = { kind: "fixed-rate", delay: 5, period: 10, priority: "normal", maxRetries: 0,
 *   jitter: "none", missedRuns: "skip", pauseAfter: 0, fails: [false], spawn: undefined, cancelSelfOn: undefined }
 * Commands.scheduleOf(spec, 0) // Schedule.fixedRate(10, { delay: 5 })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const scheduleOf = (
  spec: Pick<TaskSpec, "kind" | "delay" | "period">,
  now: number,
): Schedule.Schedule => {
  switch (spec.kind) {
    case "once":
      return Schedule.once(spec.delay)
    case "at":
      return Schedule.at(now + spec.delay - 30)
    case "fixed-rate":
      return Schedule.fixedRate(spec.period, { delay: spec.delay })
    case "fixed-delay":
      return Schedule.fixedDelay(spec.period, { delay: spec.delay })
    case "cron":
      return Schedule.cron(`*/${(spec.period % 5) + 1} * * * * *`)
    case "custom":
      return Schedule.custom((slot, finishedAt) =>
        slot === undefined
          ? finishedAt + spec.delay
          : slot < 200
            ? Math.max(slot, finishedAt) + spec.period
            : undefined,
      )
  }
}

/**
 * The options of a task (all but its id and job), as {@link Template} gives them.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskOptions {
  readonly schedule: Schedule.Schedule
  readonly priority?: Task.Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRun.MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly timeout?: Time.DurationInput | undefined
  readonly window?: Time.DurationInput | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | undefined
  readonly group?: string | undefined
  readonly key?: string | undefined
}

export const breakerOf = (
  choice: string | undefined,
): Breaker.BreakerPolicy | string | undefined => (choice === "own" ? ownBreaker : choice)

/**
 * The options of a {@link TaskSpec} scheduled at `now` (retry backoff: 3 ms, doubling, with the
 * spec's jitter; its window, tag and breaker when it has them).
 *
 * **Example** (Scheduling a spec by hand)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Scheduler } from "@tickwork/runtime"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const add = (spec: Commands.TaskSpec) =>
 *   Effect.gen(function* () {
 *     const scheduler = yield* Scheduler.Scheduler
 *     return yield* scheduler.schedule({ ...Commands.taskOptions(spec, 0), job: Effect.void })
 *   })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const taskOptions = (spec: TaskSpec, now: number): TaskOptions => ({
  schedule: scheduleOf(spec, now),
  priority: spec.priority,
  retry: { maxRetries: spec.maxRetries, base: 3, factor: 2, jitter: spec.jitter },
  missedRuns: spec.missedRuns,
  pauseAfterConsecutiveFailures: spec.pauseAfter,
  ...(spec.window === undefined ? {} : { window: spec.window }),
  ...(spec.tag === undefined ? {} : { tags: [spec.tag] }),
  ...(spec.breaker === undefined ? {} : { breaker: breakerOf(spec.breaker) }),
  ...(spec.group === undefined ? {} : { group: spec.group }),
  ...(spec.key === undefined ? {} : { key: spec.key }),
})

// ------------------------------------------------------------------ templates

/**
 * What a run of a template task should do, as the command sequence planned it.
 *
 * @category models
 * @since 0.1.0
 */
export type PlannedOutcome = "succeed" | "fail"

/**
 * One of your tasks, for the command model to schedule any number of times: its options (the
 * schedule may depend on the time it is scheduled at) and, optionally, its real job, told
 * whether the run should succeed or fail (set up your fakes, then run it). The job runs on the
 * scheduler under test only (the reference runs the plan directly) and must finish without
 * virtual time passing.
 *
 * @category models
 * @since 0.1.0
 */
export interface Template {
  readonly schedule: Schedule.Schedule | ((now: number) => Schedule.Schedule)
  readonly priority?: Task.Priority
  readonly retry?: Retry.RetryPolicy
  readonly missedRuns?: MissedRun.MissedRunPolicy
  readonly pauseAfterConsecutiveFailures?: number
  readonly window?: Time.DurationInput
  readonly tags?: ReadonlyArray<string>
  /** Its own breaker policy, or the name of a breaker in {@link Options.breakers}. */
  readonly breaker?: Breaker.BreakerPolicy | string
  readonly job?: (outcome: PlannedOutcome, run: Task.RunInfo) => Effect.Effect<unknown, unknown>
}

/**
 * A task to schedule: made from a {@link TaskSpec} or a {@link Template}, with the outcome
 * pattern of its runs.
 */
export interface Blueprint {
  /** The id prefix: the template's name, or `t` for random specs. */
  readonly name: string
  readonly describe: string
  readonly options: (now: number) => TaskOptions
  readonly fails: ReadonlyArray<boolean>
  readonly spawn: Blueprint | undefined
  readonly cancelSelfOn: number | undefined
  readonly job: Template["job"]
}

export const fromSpec = (spec: TaskSpec): Blueprint => ({
  name: "t",
  describe: JSON.stringify(spec),
  options: (now) => taskOptions(spec, now),
  fails: spec.fails,
  spawn:
    spec.spawn === undefined
      ? undefined
      : fromSpec({ ...spec, kind: "once", delay: spec.spawn, spawn: undefined }),
  cancelSelfOn: spec.cancelSelfOn,
  job: undefined,
})

export const fromTemplate = (
  name: string,
  t: Template,
  fails: ReadonlyArray<boolean>,
): Blueprint => ({
  name,
  describe: `${name} ${fails.map((f) => (f ? "F" : "S")).join("")}`,
  options: (now) => ({
    schedule: typeof t.schedule === "function" ? t.schedule(now) : t.schedule,
    priority: t.priority,
    retry: t.retry,
    missedRuns: t.missedRuns,
    pauseAfterConsecutiveFailures: t.pauseAfterConsecutiveFailures,
    window: t.window,
    tags: t.tags,
    breaker: t.breaker,
  }),
  fails,
  spawn: undefined,
  cancelSelfOn: undefined,
  job: t.job,
})

/** The outcome pattern of a task's runs from now on: run k (from the change) fails when `fails[k % n]`. */
export interface Plan {
  fails: ReadonlyArray<boolean>
  runs: number
}

export const nextFails = (plan: Plan): boolean => {
  const fail = plan.fails[plan.runs % plan.fails.length] === true
  plan.runs++
  return fail
}
