/**
 * A fast-check command model of the {@link Scheduler.Scheduler}, with the core's deterministic
 * driver as the reference: random sequences of commands — schedule a task (of every kind of
 * schedule, or of your own task templates; with windows, tags and circuit breakers), advance the
 * clock, jump to the next slot, cancel, pause, resume, update a task, move it into or out of a
 * breaker, pause/resume/cancel by filter, change what a task's runs do — are applied to both,
 * and after every command their answers, their run traces (every occurrence, as `Trace.line`s),
 * every task's state and counters, the per-state counts and the circuit breakers (their state
 * and every transition) must be equal, and the model's {@link invariants} must hold (a paused
 * task starts no run; a held one-shot is never lost). A failure shrinks to a short sequence of
 * commands.
 *
 * This module imports `fast-check` (an optional peer dependency of `@tickwork/runtime`): import
 * it from `@tickwork/runtime/testing/commands`, in tests only.
 *
 * **Example** (Your tasks' options against the reference, with your own invariant)
 *
 * ```ts
 * import { Schedule } from "@tickwork/runtime"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const report = await Commands.check({
 *   numRuns: 200,
 *   templates: {
 *     digest: { schedule: Schedule.cron("0 * * * * *"), retry: { maxRetries: 2, base: "5 seconds" }, missedRuns: "skip" },
 *     payment: { schedule: Schedule.once("30 seconds"), retry: { maxRetries: 3, base: "10 seconds", jitter: "full" } },
 *   },
 *   advance: { max: 90_000 },
 *   invariant: (view) => {
 *     // A payment never runs more than 4 times (1 + 3 retries) for its one slot.
 *     for (const t of view.tasks) if (t.id.startsWith("payment") && t.runNumber > 4) throw new Error(`${t.id} ran ${t.runNumber} times`)
 *   },
 * })
 * report.runs // 200
 * ```
 *
 * @since 0.1.0
 */
import fc from "fast-check"
import { commands, type Options, type SchedulerCommand } from "./internal/command.ts"
import { Model, System } from "./internal/systems.ts"
import { breakers } from "./internal/tasks.ts"

// The model's parts, one concept a module: its tasks, the two systems, their comparison and the
// commands. Their public names are exported here, as they always were.
export {
  changesOf,
  commands,
  type Options,
  type SchedulerCommand,
  type UpdateSpec,
  updateSpec,
} from "./internal/command.ts"
export { invariants } from "./internal/compare.ts"
export { type BulkAction, Model, System, type View } from "./internal/systems.ts"
export {
  breakers,
  controlledTaskSpec,
  limitedTaskSpec,
  modelKeys,
  ownBreaker,
  type PlannedOutcome,
  scheduleOf,
  type TaskOptions,
  type TaskSpec,
  type Template,
  taskOptions,
  taskSpec,
} from "./internal/tasks.ts"

const startOf = (options: Options) =>
  options.startAt === undefined
    ? 0
    : typeof options.startAt === "number"
      ? options.startAt
      : options.startAt.getTime()

/**
 * Runs one command sequence on a fresh reference and a fresh scheduler (closed afterwards), and
 * returns how many occurrences both recorded; rejects with a message naming the command after
 * which they differ.
 *
 * **Example** (One sequence)
 *
 * ```ts
 * import fc from "fast-check"
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const [cmds] = fc.sample(Commands.commands(), { numRuns: 1, seed: 7 })
 * await Commands.run(cmds!)
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const run = async (
  cmds: Iterable<SchedulerCommand>,
  options: Options = {},
): Promise<number> => {
  const seed = options.seed ?? 1234
  const startAt = startOf(options)
  const shared = options.breakers ?? breakers
  const system = await System.make({
    seed,
    startAt,
    workers: 1,
    logLevel: "None",
    breakers: shared,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  })
  const model = new Model({ seed, startAt, breakers: shared, limits: options.limits })
  try {
    await fc.asyncModelRun(() => ({ model, real: system }), cmds)
    return model.occurrences.length
  } finally {
    await system.close()
  }
}

/**
 * What {@link check} did.
 *
 * @category models
 * @since 0.1.0
 */
export interface Report {
  /** Command sequences run (each on a fresh reference and scheduler). */
  readonly runs: number
  /** Commands applied in all. */
  readonly commands: number
  /** Occurrences (runs, retries, missed slots, cancellations) both systems recorded, in all. */
  readonly occurrences: number
  /** Wall-clock time, ms. */
  readonly ms: number
}

/**
 * Runs the command model `numRuns` times (default: the `FC_RUNS_MODEL` environment variable, or
 * 100) with `fc.assert`, and reports what it checked. Rejects with fast-check's report — the
 * seed, the shrunk command sequence and the first difference — when the scheduler and the
 * reference disagree, or your invariant throws.
 *
 * **Example** (Random tasks of every kind)
 *
 * ```ts
 * import * as Commands from "@tickwork/runtime/testing/commands"
 *
 * const report = await Commands.check({ numRuns: 200 })
 * console.log(`${report.runs} runs, ${report.commands} commands, ${report.occurrences} occurrences in ${report.ms} ms`)
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const check = async (
  options: Options & {
    readonly numRuns?: number
    /** fast-check's seed, to replay a failure. */
    readonly fcSeed?: number
  } = {},
): Promise<Report> => {
  const numRuns = options.numRuns ?? Number(process.env.FC_RUNS_MODEL ?? 100)
  let runs = 0
  let total = 0
  let occurrences = 0
  const started = Date.now()
  await fc.assert(
    fc.asyncProperty(commands(options), async (cmds) => {
      runs++
      total += [...cmds].length
      occurrences += await run(cmds, options)
    }),
    { numRuns, ...(options.fcSeed === undefined ? {} : { seed: options.fcSeed }) },
  )
  return { runs, commands: total, occurrences, ms: Date.now() - started }
}
