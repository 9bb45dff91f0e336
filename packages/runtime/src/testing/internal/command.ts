/**
 * @internal
 * The commands of the model (public through `@tickwork/runtime/testing/commands`): each acts on
 * both systems and then compares them; {@link commands} is the arbitrary of their sequences.
 */
import type { Breaker, Kernel, MissedRun, Rules, Task } from "@tickwork/core"
import { Effect } from "effect"
import fc from "fast-check"
import * as TestScheduler from "../TestScheduler.ts"
import { compare } from "./compare.ts"
import { answer, type BulkAction, type Model, type System, type View } from "./systems.ts"
import {
  type Blueprint,
  breakerOf,
  controlledTaskSpec,
  fromSpec,
  fromTemplate,
  limitedTaskSpec,
  ownBreaker,
  scheduleOf,
  type TaskSpec,
  type Template,
  taskSpec,
} from "./tasks.ts"

// ------------------------------------------------------------------ commands

/**
 * A command of the model: applied to the reference and to the system under test, then both are
 * compared.
 *
 * @category models
 * @since 0.1.0
 */
export type SchedulerCommand = fc.AsyncCommand<Model, System, false>

/**
 * Options of the command model.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /**
   * Your tasks, by name: the model schedules them (ids `<name><n>`) with random outcome
   * patterns. Default: random tasks of every kind ({@link taskSpec}, ids `t<n>`).
   */
  readonly templates?: Readonly<Record<string, Template>>
  /** Largest clock move of an `advance` command, ms. Default 40. */
  readonly advance?: { readonly max: number }
  /** Commands per run at most. Default 25. */
  readonly maxCommands?: number
  /**
   * How the reference moves its clock: `"step"` (default) sets it to each pending slot in turn
   * and runs what is due there (`Driver.runDue`), as the runtime's actor wakes at each slot;
   * `"runUntil"` uses `Driver.runUntil`. They differ in one known case: `runUntil` records a
   * one-shot found past its deadline (a retry due after it) at the clock's time before the step,
   * not at the retry's due time where the runtime records it.
   */
  readonly reference?: "step" | "runUntil"
  /** Seed of the schedulers' retry jitter. Default 1234. */
  readonly seed?: number
  /** Where virtual time starts (both clocks). Default 0. */
  readonly startAt?: number | Date
  /**
   * The circuit breakers shared by name, on both schedulers: random tasks join `shared`, your
   * templates name theirs. Default {@link breakers}.
   */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>>
  /**
   * Flow-control limits (SPEC §20), on both schedulers: random tasks then join the declared
   * groups and share a few keys ({@link limitedTaskSpec}), so waits must agree too. Default none.
   */
  readonly limits?: Rules.Limits
  /**
   * Your own check, run on the system under test after every command (once it has been found
   * equal to the reference): throw to fail the run.
   */
  readonly invariant?: (view: View) => void
}

/** A command: `act` on both systems, then compare them. */
const command = (
  describe: () => string,
  act: (model: Model, system: System) => Promise<void>,
  invariant: Options["invariant"],
): SchedulerCommand => ({
  check: () => true,
  run: async (model, system) => {
    await act(model, system)
    await compare(model, system, describe(), invariant)
  },
  toString: describe,
})

const scheduleCommand = (blueprint: Blueprint, invariant: Options["invariant"]) =>
  command(
    () => `schedule ${blueprint.describe}`,
    async (model, system) => {
      model.add(blueprint)
      await system.run(system.add(blueprint))
    },
    invariant,
  )

const advanceCommand = (ms: number, options: Options) =>
  command(
    () => `advance ${ms}`,
    async (model, system) => {
      model.advance(ms, options.reference)
      await system.run(TestScheduler.advance(ms))
    },
    options.invariant,
  )

/** Moves the clock to the earliest pending slot (as the reference knows it), plus `extra` ms. */
const nextSlotCommand = (extra: number, options: Options) => {
  let ms: number | undefined
  return command(
    () => `to next slot +${extra}${ms === undefined ? "" : ` (advance ${ms})`}`,
    async (model, system) => {
      const next = model.driver.nextSlot()
      const by = next === undefined ? extra : Math.max(0, next - model.clock.now()) + extra
      ms = by
      model.advance(by, options.reference)
      await system.run(TestScheduler.advance(by))
    },
    options.invariant,
  )
}

/** The id a target index picks among the tasks scheduled so far. */
const pick = (model: Model, target: number): string | undefined =>
  model.ids.length === 0 ? undefined : model.ids[target % model.ids.length]

const cancelCommand = (target: number, invariant: Options["invariant"]) => {
  let id: string | undefined
  return command(
    () => `cancel ${id ?? `#${target}`}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const expected = model.cancel(id)
      const actual = await system.run(system.scheduler.cancel(id))
      if (expected !== actual) {
        throw new Error(`cancel ${id}: the reference answered ${expected}, the scheduler ${actual}`)
      }
    },
    invariant,
  )
}

const outcomesCommand = (
  target: number,
  fails: ReadonlyArray<boolean>,
  invariant: Options["invariant"],
) => {
  let id: string | undefined
  return command(
    () => `outcomes ${id ?? `#${target}`} ${fails.map((f) => (f ? "F" : "S")).join("")}`,
    async (model, system) => {
      id = pick(model, target)
      if (id === undefined) return
      model.setOutcomes(id, fails)
      system.setOutcomes(id, fails)
    },
    invariant,
  )
}

/** Compares the answers of the reference and of the scheduler to the same call. */
const same = (call: string, expected: unknown, actual: unknown): void => {
  const e = JSON.stringify(expected)
  const a = JSON.stringify(actual)
  if (e !== a) throw new Error(`${call}: the reference answered ${e}, the scheduler ${a}`)
}

const pauseCommand = (
  target: number,
  action: "pause" | "resume",
  invariant: Options["invariant"],
) => {
  let id: string | undefined
  return command(
    () => `${action} ${id ?? `#${target}`}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const target_ = id
      const expected =
        action === "pause" ? model.driver.pause(target_) : model.driver.resume(target_)
      const actual = await system.run(
        action === "pause" ? system.scheduler.pause(target_) : system.scheduler.resume(target_),
      )
      same(`${action} ${id}`, expected, actual)
    },
    invariant,
  )
}

/**
 * A change of a task's options, as the `update` command makes it (each field present or not):
 * its priority, retries, failure policy, missed-run policy, window (`null` removes it), a new
 * schedule (of a kind, from now), its breaker (`null` leaves it).
 *
 * @category models
 * @since 0.2.0
 */
export interface UpdateSpec {
  readonly priority?: Task.Priority
  readonly maxRetries?: number
  readonly pauseAfter?: number
  readonly missedRuns?: MissedRun.MissedRunPolicy
  readonly window?: number | null
  readonly schedule?: Pick<TaskSpec, "kind" | "delay" | "period">
  /** `"own"`: the task's own breaker ({@link ownBreaker}); another name: a shared breaker. */
  readonly breaker?: string | null
}

/**
 * The arbitrary of {@link UpdateSpec}: any subset of the changes, with the values
 * {@link taskSpec} draws from. Some are refused (a window on a fixed-delay schedule): both
 * systems must refuse them alike.
 *
 * **Example** (A sample)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * fc.sample(Commands.updateSpec, 1)[0] // e.g. { priority: "low", window: null }
 * ```
 *
 * @category arbitraries
 * @since 0.2.0
 */
export const updateSpec: fc.Arbitrary<UpdateSpec> = fc.record(
  {
    priority: fc.constantFrom("high", "normal", "low"),
    maxRetries: fc.integer({ min: 0, max: 2 }),
    pauseAfter: fc.integer({ min: 0, max: 3 }),
    missedRuns: fc.constantFrom("catch-up", "coalesce", "skip"),
    window: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
    schedule: fc.record({
      kind: fc.constantFrom("once", "at", "fixed-rate", "fixed-delay", "cron", "custom"),
      delay: fc.integer({ min: 0, max: 60 }),
      period: fc.integer({ min: 1, max: 25 }),
    }),
    breaker: fc.constantFrom("shared", "own", null),
  },
  { requiredKeys: [] },
)

/**
 * The changes of an {@link UpdateSpec} made at `now`, as `update(id, changes)` takes them.
 *
 * **Example** (A new schedule and no window)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * Commands.changesOf({ schedule: { kind: "fixed-rate", delay: 0, period: 10 }, window: null }, 0)
 * // { schedule: Schedule.fixedRate(10, { delay: 0 }), window: null }
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const changesOf = (u: UpdateSpec, now: number): Kernel.UpdateOptions<never> => ({
  ...(u.priority === undefined ? {} : { priority: u.priority }),
  ...(u.maxRetries === undefined
    ? {}
    : { retry: { maxRetries: u.maxRetries, base: 3, factor: 2 } }),
  ...(u.pauseAfter === undefined ? {} : { pauseAfterConsecutiveFailures: u.pauseAfter }),
  ...(u.missedRuns === undefined ? {} : { missedRuns: u.missedRuns }),
  ...(u.window === undefined ? {} : { window: u.window }),
  ...(u.schedule === undefined ? {} : { schedule: scheduleOf(u.schedule, now) }),
  ...(u.breaker === undefined ? {} : { breaker: u.breaker === null ? null : breakerOf(u.breaker) }),
})

const updateCommand = (
  target: number,
  changes: UpdateSpec,
  invariant: Options["invariant"],
  label = "update",
) => {
  let id: string | undefined
  return command(
    () => `${label} ${id ?? `#${target}`} ${JSON.stringify(changes)}`,
    async (model, system) => {
      id = pick(model, target) ?? "none"
      const target_ = id
      const now = model.clock.now()
      const expected = answer(model.driver.update(target_, changesOf(changes, now)))
      const actual = answer(
        await system.run(Effect.result(system.scheduler.update(target_, changesOf(changes, now)))),
      )
      same(`update ${id}`, expected, actual)
    },
    invariant,
  )
}

const bulkCommand = (
  action: BulkAction,
  filter: Kernel.TaskFilter,
  invariant: Options["invariant"],
) =>
  command(
    () => `${action}All ${JSON.stringify(filter)}`,
    async (model, system) => {
      const expected = model.bulk(action, filter)
      const actual = await system.run(
        action === "pause"
          ? system.scheduler.pauseAll(filter)
          : action === "resume"
            ? system.scheduler.resumeAll(filter)
            : system.scheduler.cancelAll(filter),
      )
      same(`${action}All ${JSON.stringify(filter)}`, expected, actual)
    },
    invariant,
  )

const filterArb: fc.Arbitrary<Kernel.TaskFilter> = fc.oneof(
  fc.constantFrom<Kernel.TaskFilter>({ tag: "a" }, { tag: "b" }),
  fc.constantFrom<Kernel.TaskFilter>({ state: "scheduled" }, { state: "paused" }),
  fc.constantFrom<Kernel.TaskFilter>({ kind: "once" }, { kind: "fixed-rate" }, { kind: "cron" }),
)

const pattern = fc.array(fc.boolean(), { minLength: 1, maxLength: 4 })

/**
 * The arbitrary of command sequences: schedule (a random task, or one of your templates with a
 * random outcome pattern), advance the clock, jump to the next slot (exactly, or a little late),
 * cancel, pause or resume a task (possibly one already final, paused or unknown), update its
 * options, move it into or out of a circuit breaker, pause, resume or cancel the tasks a filter
 * matches (tag, state, kind), change a task's outcome pattern. Tasks of your templates keep
 * their policies: an update changes only their priority, and they move only between the
 * breakers of {@link Options.breakers} (or out of one).
 *
 * **Example** (With your own `fc.assert`)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * await fc.assert(
 *   fc.asyncProperty(Commands.commands(), async (cmds) => {
 *     await Commands.run(cmds)
 *   }),
 *   { numRuns: 50, seed: 42 },
 * )
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const commands = (options: Options = {}): fc.Arbitrary<Iterable<SchedulerCommand>> => {
  const invariant = options.invariant
  const templates = Object.entries(options.templates ?? {})
  const blueprint: fc.Arbitrary<Blueprint> =
    templates.length === 0
      ? (options.limits === undefined ? controlledTaskSpec : limitedTaskSpec(options.limits)).map(
          fromSpec,
        )
      : fc
          .tuple(fc.constantFrom(...templates), pattern)
          .map(([[name, t], fails]) => fromTemplate(name, t, fails))
  // Your templates keep their own policies: an update changes only their priority, and they
  // move only between the breakers you named (or out of one).
  const update: fc.Arbitrary<UpdateSpec> =
    templates.length === 0
      ? updateSpec
      : fc.record({ priority: updateSpec.map((u) => u.priority ?? "normal") })
  const breakerChoice: fc.Arbitrary<string | null> =
    templates.length === 0
      ? fc.constantFrom("shared", "own", null)
      : fc.constantFrom(null, ...Object.keys(options.breakers ?? {}))
  const max = options.advance?.max ?? 40
  const schedule = blueprint.map((b) => scheduleCommand(b, invariant))
  const advance = fc.integer({ min: 0, max }).map((ms) => advanceCommand(ms, options))
  const nextSlot = fc
    .oneof(fc.constant(0), fc.integer({ min: 0, max }))
    .map((extra) => nextSlotCommand(extra, options))
  return fc.commands(
    [
      // Listed more than once: drawn more often than the controls, so tasks run.
      schedule,
      schedule,
      schedule,
      advance,
      advance,
      nextSlot,
      nextSlot,
      fc.nat(20).map((target) => cancelCommand(target, invariant)),
      fc
        .tuple(fc.nat(20), pattern)
        .map(([target, fails]) => outcomesCommand(target, fails, invariant)),
      fc.nat(20).map((target) => pauseCommand(target, "pause", invariant)),
      fc.nat(20).map((target) => pauseCommand(target, "resume", invariant)),
      fc
        .tuple(fc.nat(20), update)
        .map(([target, changes]) => updateCommand(target, changes, invariant)),
      fc
        .tuple(fc.nat(20), breakerChoice)
        .map(([target, breaker]) => updateCommand(target, { breaker }, invariant, "breaker")),
      fc
        .tuple(fc.constantFrom<BulkAction>("pause", "resume", "cancel"), filterArb)
        .map(([action, filter]) => bulkCommand(action, filter, invariant)),
    ],
    { maxCommands: options.maxCommands ?? 25, size: "max" },
  )
}
