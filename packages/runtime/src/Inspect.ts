/**
 * XState inspection of a running scheduler. Build the scheduler with the `inspect` option — the
 * observer you would give XState's `createActor(logic, { inspect })` — and the timing actor and
 * every task show up as XState actors: the timing actor (id `"timing"`) is the root, each task
 * (id = the task's id) is its child, an actor of `Lifecycle.machine` whose ref carries the
 * machine (`actorRef.logic.config`), so inspectors such as `@statelyai/inspect` draw its real
 * diagram.
 *
 * For each task the scheduler reports what an XState actor of `Lifecycle.machine` reports when
 * sent the same events:
 *
 * | when | events |
 * |---|---|
 * | accepted | `@xstate.actor`; `@xstate.event` `xstate.init` (with the machine input) from the timing actor; `@xstate.snapshot` |
 * | a run starts | `@xstate.event` `START` from the timing actor; `@xstate.snapshot` |
 * | a run ends | `@xstate.event` `SUCCEED` or `FAIL` (with `nextSlot` when the task goes on to its next slot); `@xstate.action` `scheduleNext`/`scheduleRetry` when taken; `@xstate.snapshot` |
 * | cancelled | `@xstate.event` `CANCEL` (no source: it comes from the caller); `@xstate.snapshot` (`cancelled`) |
 * | a run ends after its task was cancelled | `@xstate.event` only: the final actor ignores it, as in XState |
 *
 * Snapshot values and contexts are XState's own: each task keeps, only while inspecting, an
 * XState snapshot advanced with the pure `transition(Lifecycle.machine, snapshot, event)`, and
 * dropped when the task is final. `@xstate.microstep` is not reported. Without `inspect`, none
 * of this exists and the scheduler's hot path is unchanged.
 *
 * Events are reported synchronously, inside the scheduler's steps: an observer must be quick
 * (hand events to a buffer or a socket, as `@statelyai/inspect` does). One that throws is told
 * through its `error` callback, if any, and otherwise ignored.
 *
 * **Example** (Send a scheduler's tasks to the Stately inspector through its local relay)
 *
 * ```ts
 * import { createWebSocketInspector } from "@statelyai/inspect"
 * import { Scheduler } from "@tickwork/runtime"
 *
 * const inspector = createWebSocketInspector({ url: "ws://127.0.0.1:8080" })
 * const layer = Scheduler.layer({ inspect: inspector.inspect })
 * ```
 *
 * @since 0.1.0
 */
import type { Lifecycle, Task } from "@tickwork/core"
import { Effect, Option, type Scope } from "effect"
import * as internal from "./internal/inspection.ts"
import type { SchedulerShape } from "./Scheduler.ts"

/**
 * What the `inspect` option takes: the observer (or function) XState's
 * `createActor(logic, { inspect })` takes, e.g. `inspector.inspect` from `@statelyai/inspect`.
 * `{}` observes nothing but still lets {@link watch} follow tasks.
 *
 * @category models
 * @since 0.1.0
 */
export type Observer = internal.InspectObserver

/**
 * A task's XState snapshot: `value` is its lifecycle state, `context` the machine's counters,
 * `status` is `"done"` once the task is final.
 *
 * @category models
 * @since 0.1.0
 */
export type TaskSnapshot = internal.TaskSnapshot

/**
 * A live, started XState actor of `Lifecycle.machine` that follows one task: its snapshot is
 * the task's, and it changes when the task does. Use XState's usual tools on it
 * (`subscribe`, `getSnapshot`, `waitFor`, `@xstate/react`'s `useSelector`, …). It is a mirror:
 * sending it events changes the mirror only, never the scheduler (use the service's `cancel`).
 *
 * @category models
 * @since 0.1.0
 */
export type TaskActor = internal.TaskActor

/**
 * A live XState actor that follows the task `id` of an inspected scheduler, from its current
 * state on: restored from the task's XState snapshot and sent every event the task takes, so
 * its snapshots are exactly the task's. It reaches a final state (`status: "done"`) with the
 * task, and is stopped when the scope closes. `Option.none()` when the task is unknown or
 * already final.
 *
 * **When to use**: a UI or a test that wants one task as an XState actor. To see every task,
 * use the `inspect` option itself.
 *
 * **Gotchas**: the scheduler must be built with the `inspect` option (`{}` will do); otherwise
 * this dies with an error saying so. The actor's subscribers run inside the scheduler's steps:
 * keep them quick.
 *
 * **Example** (Wait until a task has run twice)
 *
 * ```ts
 * import { Effect, Option } from "effect"
 * import { waitFor } from "xstate"
 * import { Inspect, Schedule, Scheduler } from "@tickwork/runtime"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.make({ inspect: {} })
 *   const id = yield* scheduler.schedule({
 *     schedule: Schedule.fixedRate("1 second"),
 *     job: Effect.log("tick"),
 *   })
 *   const actor = Option.getOrThrow(yield* Inspect.watch(scheduler, id))
 *   actor.subscribe((snapshot) => console.log(snapshot.value, snapshot.context.runNumber))
 *   yield* Effect.promise(() => waitFor(actor, (s) => s.context.runNumber >= 2))
 * })
 * Effect.runPromise(Effect.scoped(program))
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const watch = (
  scheduler: SchedulerShape,
  id: string,
): Effect.Effect<Option.Option<TaskActor>, never, Scope.Scope> =>
  Effect.suspend(() => {
    const inspection = internal.hubOf(scheduler)
    if (inspection === undefined) {
      return Effect.die(
        new Error(
          "Inspect.watch needs a scheduler built with the `inspect` option (`inspect: {}` will do)",
        ),
      )
    }
    return Effect.acquireRelease(
      Effect.sync(() => Option.fromNullishOr(inspection.watch(id))),
      (actor) =>
        Effect.sync(() => {
          if (Option.isNone(actor)) return
          inspection.unwatch(id, actor.value)
          actor.value.stop()
        }),
    )
  })

/**
 * The current XState snapshot of a live task of an inspected scheduler; `Option.none()` for an
 * unknown or final task, or a scheduler built without `inspect`.
 *
 * @category getters
 * @since 0.1.0
 */
export const snapshot = (
  scheduler: SchedulerShape,
  id: string,
): Effect.Effect<Option.Option<TaskSnapshot>> =>
  Effect.sync(() => Option.fromNullishOr(internal.hubOf(scheduler)?.snapshotOf(id)))

/**
 * The machine event a finished run stands for: `SUCCEED` for a `succeeded` outcome, `FAIL` for
 * any other, with `nextSlot` when the task continues to its schedule's next slot
 * (`continuation: "next"`). Sent after `START`, it takes an XState actor of `Lifecycle.machine`
 * to the state the scheduler reports in `record.state`.
 *
 * @category getters
 * @since 0.1.0
 */
export const completionEvent: (record: Task.RunRecord) => Lifecycle.TaskEvent =
  internal.completionEvent
