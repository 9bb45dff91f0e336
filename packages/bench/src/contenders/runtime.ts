/**
 * The tickwork Effect runtime (@tickwork/runtime) as a contender:
 * - in virtual time (parts 1 and 5): the `Scheduler` service on Effect's `TestClock`, fed
 *   through its public API (`schedule`, then `TestClock.adjust`), default options unless a row
 *   says otherwise;
 * - on the real clock (part 3): the same service on the live clock (it reads the monotonic
 *   clock, the harness's clock too), every task armed with `Schedule.at(slot)`.
 */
import { Schedule, Scheduler } from "@tickwork/runtime"
import { type Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { TestClock } from "effect/testing"
import type { RealtimeContender } from "./realtime.ts"
import type { VirtualContender, VirtualInstance, Workload } from "./virtual.ts"

/** A scheduler in a scope of its own, and a way to run Effects with its services. */
export interface RuntimeEnv {
  readonly scheduler: Scheduler.SchedulerShape
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  readonly close: () => Promise<void>
}

/** Builds a scheduler on TestClock (warning delay long enough for 1M schedule calls). */
export const testClockEnv = async (options: Scheduler.SchedulerOptions): Promise<RuntimeEnv> => {
  const scope = Scope.makeUnsafe()
  const context = (await Effect.runPromise(
    Layer.buildWithScope(
      Layer.mergeAll(TestClock.layer({ warningDelay: "10 minutes" }), Logger.layer([])),
      scope,
    ),
  )) as Context.Context<never>
  const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
    Effect.runPromiseWith(context)(effect)
  const scheduler = await run(Scheduler.make(options).pipe(Scope.provide(scope)))
  return { scheduler, run, close: () => run(Scope.close(scope, Exit.void)) }
}

/** Schedules the workload's one-shot tasks through the service, in one fiber. */
export const scheduleAll = (
  env: RuntimeEnv,
  n: number,
  scheduleFor: (k: number) => Schedule.Schedule,
  job: Effect.Effect<void>,
): Promise<void> =>
  env.run(
    Effect.gen(function* () {
      for (let k = 0; k < n; k++) yield* env.scheduler.schedule({ schedule: scheduleFor(k), job })
    }),
  )

/** Finished tasks so far. */
export const finished = (env: RuntimeEnv): Promise<number> =>
  env.run(Effect.map(env.scheduler.stats, (s) => s.done + s.failed + s.cancelled + s.removed))

/** (f) The runtime in virtual time, with `workers` workers and otherwise default options. */
export const runtimeVirtual = (
  workers: number,
  key: string,
  name: string,
  options: Scheduler.SchedulerOptions = {},
): VirtualContender => ({
  key,
  name,
  create: async (): Promise<VirtualInstance> => {
    const env = await testClockEnv({ ...options, workers })
    return {
      schedule: async (w: Workload) => {
        const { delays } = w
        await scheduleAll(env, w.n, (k) => Schedule.once(delays[k] as number), Effect.void)
        return { done: w.n }
      },
      run: async (w: Workload) => {
        await env.run(TestClock.adjust(w.end))
        return { done: await finished(env) }
      },
      figures: () => ({}),
      close: () => env.close(),
    }
  },
})

/**
 * The runtime on the real clock: the same service, live clock, every task at its slot. All tasks
 * share one job function, as an application's tasks of one kind do; it finds its task's index
 * from the run's generated id (`#<row>.<generation>`: a fresh scheduler gives task k row k).
 */
export const runtimeRealtime = (workers: number): RealtimeContender => ({
  key: `runtime-${workers}`,
  name: `tickwork runtime (${workers} workers)`,
  start: (slots, started) => {
    const scope = Scope.makeUnsafe()
    // Building the service and accepting tasks are synchronous steps: the harness opens the
    // window only after `start` returns.
    const run = <A, E>(effect: Effect.Effect<A, E>): A =>
      Effect.runSync(effect.pipe(Effect.provide(Logger.layer([]))))
    const scheduler = run(Scheduler.make({ workers }).pipe(Scope.provide(scope)))
    const taskOfRow = new Int32Array(slots.length)
    const rowOf = (id: string): number => Number.parseInt(id.slice(1), 10)
    const job = (info: { readonly id: string }) =>
      Effect.sync(() => started(taskOfRow[rowOf(info.id)] as number))
    run(
      Effect.gen(function* () {
        for (let k = 0; k < slots.length; k++) {
          const id = yield* scheduler.schedule({ schedule: Schedule.at(slots[k] as number), job })
          taskOfRow[rowOf(id)] = k
        }
      }),
    )
    return {
      stop: () => {
        Effect.runFork(Scope.close(scope, Exit.void).pipe(Effect.provide(Logger.layer([]))))
      },
    }
  },
})
